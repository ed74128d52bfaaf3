/**
 * Programs a user runs with {@code bin/switchml-submit} or {@code examples/bin/allreduce-bench}: the
 * allreduce benchmark against a baseline measured in the same run, Spark's treeAggregate against
 * SwitchMLAggregator, and SwitchMLLogisticRegression against stock MLlib.
 */
package org.switchml.examples;
