package org.switchml.control;

import com.google.protobuf.ByteString;
import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;

/**
 * The forwarding pipeline: pushed with SetForwardingPipelineConfig (VERIFY_AND_COMMIT), the P4Info plus,
 * for BMv2, the compiled program; read back with GetForwardingPipelineConfig.
 */
final class PipelinePush {
    private final P4InfoIndex p4;
    private final P4RuntimeConnection connection;

    PipelinePush(final P4InfoIndex p4, final P4RuntimeConnection connection) {
        this.p4 = p4;
        this.connection = connection;
    }

    /** Pushes and commits {@code config} with this controller's P4Info. */
    void push(final PipelineConfig config) {
        connection.requirePrimary("set the pipeline");
        final ForwardingPipelineConfig.Builder cfg = ForwardingPipelineConfig.newBuilder()
                .setP4Info(p4.p4info())
                .setP4DeviceConfig(ByteString.copyFrom(config.deviceConfig()))
                .setCookie(ForwardingPipelineConfig.Cookie.newBuilder().setCookie(config.cookie()));
        connection.setPipeline(
                SetForwardingPipelineConfigRequest.Action.VERIFY_AND_COMMIT,
                cfg.build(),
                "SetForwardingPipelineConfig (" + config.target() + ")");
    }

    /** The switch's current pipeline (everything). */
    ForwardingPipelineConfig read() {
        return connection.readPipeline();
    }
}
