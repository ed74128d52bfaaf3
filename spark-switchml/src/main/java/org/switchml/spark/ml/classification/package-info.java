/**
 * Drop-in MLlib estimators whose gradient sums go through the switch:
 * {@link org.switchml.spark.ml.classification.SwitchMLLogisticRegression}. Most of what it runs serves any
 * linear model alike: the input batches and their statistics, the objective ({@code LinearObjective}: a loss's
 * kernels, L2, standardization, coefficient layout), the loop that drives an optimizer of
 * {@code org.switchml.optim}, the reports and the fallback to stock MLlib; the {@code Logistic*} classes hold
 * what is logistic. Reaches the switch only through the public API of org.switchml.spark.
 */
package org.switchml.spark.ml.classification;
