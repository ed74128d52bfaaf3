/**
 * Drop-in MLlib regressors whose gradient sums go through the switch:
 * {@link org.switchml.spark.ml.regression.SwitchMLLinearRegression}. It holds its params, MLlib's checks of its
 * problem and its genuine MLlib model; the fit itself (input, statistics, objective, optimizer, loop, reports,
 * fallback) is {@code org.switchml.spark.ml.linear}'s.
 */
package org.switchml.spark.ml.regression;
