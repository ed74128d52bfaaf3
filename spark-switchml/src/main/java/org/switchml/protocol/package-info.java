/**
 * The SwitchML wire protocol and the facts every side shares: the packet header and its kinds, the job's
 * shape ({@link org.switchml.protocol.JobSpec}), int32 quantization of float and double vectors, drop
 * reasons and the counters of a job and of a switch. Depends on nothing else of ours.
 */
package org.switchml.protocol;
