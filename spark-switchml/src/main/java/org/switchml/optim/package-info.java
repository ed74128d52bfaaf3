/**
 * The quasi-Newton optimizers the estimators run inside one replicated loop: L-BFGS, OWL-QN and L-BFGS-B as
 * step machines over a flat {@code double[]} state, written so that every worker takes the same steps from
 * the same sums, bit for bit. Plain Java: nothing here knows Spark or the switch (only {@code java.*}).
 */
package org.switchml.optim;
