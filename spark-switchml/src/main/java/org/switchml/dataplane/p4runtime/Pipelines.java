package org.switchml.dataplane.p4runtime;

import io.grpc.Status;
import java.util.List;
import java.util.function.Consumer;
import org.switchml.p4info.P4InfoIndex;
import p4.v1.P4RuntimeOuterClass.ForwardingPipelineConfig;
import p4.v1.P4RuntimeOuterClass.GetForwardingPipelineConfigRequest;
import p4.v1.P4RuntimeOuterClass.SetForwardingPipelineConfigRequest;

/**
 * SetForwardingPipelineConfig and GetForwardingPipelineConfig: the committed and the saved pipeline. A
 * config is accepted when its P4Info names what p4/switchml.p4 names (this switch runs only that
 * program); committing one hands it to {@code realise}, which clears the forwarding state and the
 * counters, as loading a program does. Called with the service's lock held.
 */
final class Pipelines {
    private final P4InfoIndex reference;
    private final Consumer<Pipeline> realise;
    private Pipeline committed;
    private Pipeline saved;

    Pipelines(final P4InfoIndex reference, final Consumer<Pipeline> realise) {
        this.reference = reference;
        this.realise = realise;
    }

    /** Carries out the request's action (the caller checked device and primary). */
    void apply(final SetForwardingPipelineConfigRequest request) throws Failure {
        switch (request.getAction()) {
            case VERIFY -> verify(request);
            case VERIFY_AND_SAVE -> saved = verify(request);
            case VERIFY_AND_COMMIT -> commit(verify(request));
            case COMMIT -> {
                if (request.hasConfig()) {
                    throw new Failure(
                            Status.Code.INVALID_ARGUMENT, "COMMIT takes no config (it commits the " + "saved one)");
                }
                if (saved == null) {
                    throw new Failure(Status.Code.FAILED_PRECONDITION, "COMMIT: no config was saved");
                }
                commit(saved);
                saved = null;
            }
            case RECONCILE_AND_COMMIT -> {
                final Pipeline p = verify(request);
                if (committed == null) {
                    commit(p);
                } else if (p.index().p4info().equals(committed.index().p4info())) {
                    committed = p; // same program: the forwarding state stays
                } else {
                    throw new Failure(
                            Status.Code.INVALID_ARGUMENT,
                            "RECONCILE_AND_COMMIT: the forwarding " + "state cannot be kept across a different P4Info");
                }
            }
            default ->
                throw new Failure(
                        Status.Code.INVALID_ARGUMENT,
                        "SetForwardingPipelineConfig needs an " + "action, got " + request.getAction());
        }
    }

    /** The committed pipeline; FAILED_PRECONDITION before the first commit. */
    Pipeline committed() throws Failure {
        if (committed == null) {
            throw new Failure(
                    Status.Code.FAILED_PRECONDITION,
                    "no forwarding pipeline: send " + "SetForwardingPipelineConfig first");
        }
        return committed;
    }

    /** The parts of the committed config that {@code type} asks for, with its cookie. */
    ForwardingPipelineConfig read(final GetForwardingPipelineConfigRequest.ResponseType type) throws Failure {
        final ForwardingPipelineConfig cfg = committed().config();
        final ForwardingPipelineConfig.Builder b = ForwardingPipelineConfig.newBuilder();
        if (cfg.hasCookie()) {
            b.setCookie(cfg.getCookie());
        }
        switch (type) {
            case P4INFO_AND_COOKIE -> b.setP4Info(cfg.getP4Info());
            case DEVICE_CONFIG_AND_COOKIE -> b.setP4DeviceConfig(cfg.getP4DeviceConfig());
            case COOKIE_ONLY -> {}
            default -> b.setP4Info(cfg.getP4Info()).setP4DeviceConfig(cfg.getP4DeviceConfig());
        }
        return b.build();
    }

    /**
     * Accepts a config whose P4Info names what p4/switchml.p4 names (ids may differ). A BMv2 JSON in
     * p4_device_config is accepted and not used: this switch runs the same program natively.
     */
    private Pipeline verify(final SetForwardingPipelineConfigRequest request) throws Failure {
        if (!request.hasConfig() || !request.getConfig().hasP4Info()) {
            throw new Failure(Status.Code.INVALID_ARGUMENT, request.getAction() + " needs a config with a P4Info");
        }
        final P4InfoIndex index = new P4InfoIndex(request.getConfig().getP4Info());
        final List<String> diff = reference.differencesFrom(index);
        if (!diff.isEmpty()) {
            throw new Failure(
                    Status.Code.INVALID_ARGUMENT,
                    "the P4Info does not match switchml.p4 (this switch runs "
                            + "only that program): " + String.join("; ", diff.subList(0, Math.min(5, diff.size())))
                            + (diff.size() > 5 ? "; and " + (diff.size() - 5) + " more" : ""));
        }
        return new Pipeline(index, request.getConfig());
    }

    private void commit(final Pipeline p) {
        realise.accept(p);
        committed = p;
    }
}
