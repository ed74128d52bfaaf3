package org.switchml.spark.driver;

import java.lang.reflect.Constructor;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.protocol.SwitchAddress;
import org.switchml.spark.config.SwitchMLConfig;
import org.switchml.spark.registrar.EmbeddedSwitchRegistrar;
import org.switchml.spark.registrar.JobRegistrar;
import org.switchml.spark.registrar.JobServiceRegistrar;

/**
 * Which registrar the settings ask for: an external switch through P4Runtime or through a registrar class
 * named in the settings, or (by default) a software switch embedded in the driver.
 */
final class Registrars {
    private static final Logger LOG = LoggerFactory.getLogger(Registrars.class);

    private Registrars() {}

    /**
     * The link to the switch the settings name. A bad setting throws; a switch that cannot be reached does
     * not (the link says why and tries again later).
     *
     * @param driverHost the driver's host, where an embedded switch binds unless the settings say otherwise
     * @param all        every Spark setting, handed to an external registrar
     */
    static RegistrarLink link(
            final Function<String, String> settings, final String driverHost, final Map<String, String> all) {
        final String external = SwitchMLConfig.SWITCH_ADDRESS.from(settings);
        final SwitchAddress address = external.isEmpty() ? null : SwitchAddress.parse(external);
        final String registrarClass = SwitchMLConfig.REGISTRAR.from(settings);
        if (!registrarClass.isEmpty()) {
            if (address == null) {
                throw new IllegalArgumentException(SwitchMLConfig.REGISTRAR.key() + "=" + registrarClass + " installs "
                        + "jobs on an external switch, so " + SwitchMLConfig.SWITCH_ADDRESS.key() + " must name it");
            }
            final Constructor<?> ctor = registrarConstructor(registrarClass);
            return new RegistrarLink(
                    () -> {
                        try {
                            return (JobRegistrar) ctor.newInstance(address, all);
                        } catch (final ReflectiveOperationException e) {
                            throw new IllegalStateException(
                                    registrarClass + ": " + (e.getCause() == null ? e : e.getCause()), e);
                        }
                    },
                    "switch " + address + " (registrar " + registrarClass + ")",
                    address);
        }
        final String service = SwitchMLConfig.JOB_SERVICE_ADDRESS.from(settings);
        if (!service.isEmpty()) {
            if (SwitchMLConfig.AUTH_TOKEN_FILE.from(settings).isEmpty()) {
                throw new IllegalArgumentException(SwitchMLConfig.JOB_SERVICE_ADDRESS.key() + "=" + service
                        + " names a shared switch, whose job service takes only authenticated calls: set "
                        + SwitchMLConfig.AUTH_TOKEN_FILE.key() + " to the file with the switch's token");
            }
            return new RegistrarLink(
                    () -> new JobServiceRegistrar(address, all),
                    "the job service " + service + (address == null ? "" : " of switch " + address),
                    address);
        }
        if (address != null) {
            throw new IllegalArgumentException(SwitchMLConfig.SWITCH_ADDRESS.key() + "=" + external
                    + " names an external switch, so " + SwitchMLConfig.JOB_SERVICE_ADDRESS.key()
                    + " (its job service) or " + SwitchMLConfig.REGISTRAR.key()
                    + " (a JobRegistrar class) must say how to install jobs on it");
        }
        String host = SwitchMLConfig.SWITCH_HOST.from(settings);
        if (host.isEmpty()) {
            host = driverHost;
        }
        final int lanes = SwitchMLConfig.SWITCH_LANES.from(settings);
        final long admission = SwitchMLConfig.ADMISSION_TIMEOUT.from(settings);
        final String bindHost = host;
        return new RegistrarLink(
                () -> embedded(bindHost, lanes, admission), "the embedded software switch on " + host, null);
    }

    /** A software switch in this JVM with its controller and job service. */
    private static JobRegistrar embedded(final String bindHost, final int lanes, final long admissionTimeoutMs) {
        final EmbeddedSwitchRegistrar r = EmbeddedSwitchRegistrar.start(bindHost, lanes, admissionTimeoutMs);
        LOG.info("spark-switchml: embedded software switch listening on {}", r.address());
        return r;
    }

    /** The public {@code (SwitchAddress, Map)} constructor of a registrar class named in the settings. */
    private static Constructor<?> registrarConstructor(final String registrarClass) {
        try {
            final Class<?> c =
                    Class.forName(registrarClass, true, Thread.currentThread().getContextClassLoader());
            if (!JobRegistrar.class.isAssignableFrom(c)) {
                throw new ClassCastException(c.getName() + " does not implement " + JobRegistrar.class.getName());
            }
            return c.getConstructor(SwitchAddress.class, Map.class);
        } catch (final ReflectiveOperationException | ClassCastException e) {
            throw new IllegalArgumentException(
                    SwitchMLConfig.REGISTRAR.key() + "=" + registrarClass
                            + ": cannot create a JobRegistrar with a public (SwitchAddress, Map) constructor: " + e,
                    e);
        }
    }
}
