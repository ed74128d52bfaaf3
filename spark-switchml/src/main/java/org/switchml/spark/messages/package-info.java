/**
 * What the driver and the executors tell each other: the rendezvous messages of a barrier stage (hello,
 * plan, worker, streaming, progress), the settings a stage ships to its tasks, a task's outcome, and the
 * text form of worker endpoints. Plain serializable data; uses only the configuration.
 */
package org.switchml.spark.messages;
