/**
 * Drop-in MLlib estimators whose gradient sums go through the switch:
 * {@link org.switchml.spark.ml.classification.SwitchMLLogisticRegression} and its objective, feature
 * summary and report. Reaches the switch only through the public API of org.switchml.spark.
 */
package org.switchml.spark.ml.classification;
