/**
 * The public Spark API: {@link org.switchml.spark.SwitchMLAggregator} (a treeAggregate through the switch),
 * {@link org.switchml.spark.ReplicatedLoop} (a whole iterative fit in one barrier stage),
 * {@link org.switchml.spark.SwitchMLPlugin}, {@link org.switchml.spark.SwitchMLKryoRegistrator} and
 * {@link org.switchml.spark.SwitchMLDriver} (what the driver knows of the switch). Built on the rooms below
 * it: config, rpc, registrar, executor and driver; never on the estimators of spark.ml.
 */
package org.switchml.spark;
