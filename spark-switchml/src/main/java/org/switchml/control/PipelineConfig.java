package org.switchml.control;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What {@link SwitchController#setPipeline} pushes besides the P4Info: the target kind and, for BMv2, the
 * compiled program ({@code build/switchml.json} from p4c) as {@code p4_device_config}.
 *
 * @param target       the dataplane kind
 * @param deviceConfig BMv2 JSON bytes; empty for the software switch
 * @param cookie       opaque value stored with the pipeline and returned by GetForwardingPipelineConfig
 */
public record PipelineConfig(Target target, byte[] deviceConfig, long cookie) {

    public PipelineConfig {
        if (target == null) {
            throw new IllegalArgumentException("pipeline config needs a target");
        }
        deviceConfig = deviceConfig == null ? new byte[0] : deviceConfig.clone();
        if (target == Target.BMV2 && deviceConfig.length == 0) {
            throw new IllegalArgumentException("a BMv2 pipeline needs the p4c JSON as device config");
        }
    }

    /** The software switch: P4Info only. */
    public static PipelineConfig softwareSwitch() {
        return new PipelineConfig(Target.SOFTWARE_SWITCH, new byte[0], 0);
    }

    /** BMv2 with the given p4c JSON bytes. */
    public static PipelineConfig bmv2(final byte[] json) {
        return new PipelineConfig(Target.BMV2, json, 0);
    }

    /** BMv2 with the p4c JSON read from {@code json} (e.g. p4/build/switchml.json). */
    public static PipelineConfig bmv2(final Path json) {
        try {
            return bmv2(Files.readAllBytes(json));
        } catch (final IOException e) {
            throw new IllegalArgumentException("cannot read BMv2 JSON " + json + ": " + e.getMessage(), e);
        }
    }

    @Override
    public byte[] deviceConfig() {
        return deviceConfig.clone();
    }
}
