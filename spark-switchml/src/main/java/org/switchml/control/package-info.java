/**
 * The P4Runtime controller: it holds the primary role on a switch (BMv2 or the software switch), pushes the
 * pipeline, allocates a job's resources and installs its table entries and multicast group, and reads its
 * counters. Talks to any switch only over P4Runtime; uses protocol and p4info.
 */
package org.switchml.control;
