/**
 * spark-switchml as a whole: its version ({@link org.switchml.Version}), which is also what
 * {@code java -jar spark-switchml-VERSION.jar} prints. The library itself lives in the packages below, from
 * the wire protocol up to the Spark estimators.
 */
package org.switchml;
