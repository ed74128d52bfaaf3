/**
 * Spark Connect: {@link org.switchml.spark.connect.SwitchMLBackend}, the server's ML backend plugin
 * ({@code spark.connect.ml.backend.classes}), under which a stock estimator that a Connect client (PySpark's
 * {@code pyspark.ml}, or any client sending the same messages) asks the server to fit trains with its
 * spark-switchml drop-in. The top of the library: built on the estimators of spark.ml and the public API of
 * org.switchml.spark, and nothing else of ours depends on it.
 */
package org.switchml.spark.connect;
