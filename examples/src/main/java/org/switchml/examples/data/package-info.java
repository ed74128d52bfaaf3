/**
 * Readers of real data sets for the examples and benchmarks: Fashion-MNIST from its IDX files (Debian's
 * {@code dataset-fashion-mnist}).
 */
package org.switchml.examples.data;
