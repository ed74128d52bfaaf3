/**
 * The switch shard an executor hosts when a stage's aggregation runs on the executors themselves (no switch in
 * the network): a software switch on the executor's address, owning a part of every sharded stage's vector, its
 * parts installed in process from the stage's plan and retired once every worker is done with them. Uses the
 * dataplane and the protocol; knows nothing of the worker side, the driver or Spark's scheduling.
 */
package org.switchml.spark.shard;
