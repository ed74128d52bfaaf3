/**
 * The optimizers the estimators run inside one replicated loop: L-BFGS, OWL-QN and L-BFGS-B, written so that
 * every worker takes the same steps from the same sums, bit for bit.
 */
package org.switchml.spark.ml.optim;
