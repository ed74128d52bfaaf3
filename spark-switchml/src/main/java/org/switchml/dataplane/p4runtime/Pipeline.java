package org.switchml.dataplane.p4runtime;

import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;

/** A forwarding pipeline as pushed: its P4Info, indexed, and the config it came in. */
record Pipeline(P4InfoIndex index, ForwardingPipelineConfig config) {}
