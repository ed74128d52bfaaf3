/**
 * Programs a user runs with {@code bin/switchml-submit} or {@code examples/bin/allreduce-bench}: example
 * jobs ({@link org.switchml.examples.TrainLogisticRegression} on LIBSVM, Parquet or Fashion-MNIST against
 * stock MLlib, {@link org.switchml.examples.TrainPipeline} with the drop-in estimator in a {@code Pipeline})
 * and benchmarks (the allreduce against a baseline measured in the same run, Spark's treeAggregate against
 * SwitchMLAggregator, SwitchMLLogisticRegression against stock MLlib). Command lines are picocli's
 * ({@link org.switchml.examples.Cli}); docs/examples.md lists them.
 */
package org.switchml.examples;
