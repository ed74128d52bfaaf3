package org.switchml.spark;

import java.util.Map;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchAddress;
import org.switchml.protocol.SwitchMLException;
import org.switchml.spark.registrar.JobRegistrar;

/**
 * A registrar for an "external" switch the test controls. With {@link #blind} set it reports success
 * without touching the switch (a control plane that is up while the dataplane is gone).
 */
public final class TestRegistrar implements JobRegistrar {
    static volatile SoftwareSwitch target;
    static volatile boolean blind;

    private final SwitchAddress address;

    public TestRegistrar(final SwitchAddress address, final Map<String, String> settings) {
        this.address = address;
    }

    @Override
    public SwitchAddress address() {
        return address;
    }

    @Override
    public JobSpec register(final JobSpec spec) {
        final JobSpec installed = spec.withSecret(JobSpec.randomSecret()); // as a controller does
        if (blind) {
            return installed;
        }
        final SoftwareSwitch sw = target;
        if (sw == null) {
            throw new SwitchMLException("test switch is stopped");
        }
        sw.registerJob(installed);
        return installed;
    }

    @Override
    public void remove(final int jobId) {
        final SoftwareSwitch sw = target;
        if (sw != null && !blind) {
            sw.removeJob(jobId);
        }
    }

    @Override
    public void close() {}
}
