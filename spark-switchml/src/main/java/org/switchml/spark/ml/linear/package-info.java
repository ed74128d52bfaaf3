/**
 * What the linear estimators of {@code org.switchml.spark.ml.classification} and
 * {@code org.switchml.spark.ml.regression} share, from the input to the report: the input read into cached
 * {@link org.switchml.spark.ml.linear.InstanceBatch}es, the feature (and label) statistics through the switch, the
 * objectives in MLlib's training space (one kernel per loss and layout: logistic, softmax, hinge and squared
 * error; L2 regularization, standardization, the coefficient layout), the optimizer MLlib would pick, the fit loop
 * that drives it in barrier stages, the reports ({@link org.switchml.spark.ml.linear.FitReport},
 * {@link org.switchml.spark.ml.linear.FitListener}) and the fallback to stock MLlib. The estimators' packages hold
 * what is particular to each: its params, MLlib's checks and its model. Public where an estimator's package calls
 * it; the user-facing types are the reports and the listener. Reaches the switch only through the public API of
 * org.switchml.spark.
 */
package org.switchml.spark.ml.linear;
