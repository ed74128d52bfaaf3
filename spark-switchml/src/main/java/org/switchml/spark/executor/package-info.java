/**
 * An executor's side, for the life of the application: its one worker socket, the barrier stages running
 * on it (their tasks sum in memory and one of them streams to the switch), the frame every task runs in,
 * and the checks of what a task sends. Reaches the driver only through rpc messages; uses the client.
 */
package org.switchml.spark.executor;
