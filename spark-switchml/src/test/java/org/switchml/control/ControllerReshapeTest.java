package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.InsecureServerCredentials;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.dataplane.SoftwareSwitch;
import org.switchml.dataplane.SwitchOptions;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.p4info.Bytestrings;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.JobSpec;
import p4.v1.P4RuntimeGrpc;
import p4.v1.P4RuntimeOuterClass.TableEntry;

/**
 * A new shape of a live job whose installation the switch refuses: neither shape stays, on the switch, in the
 * dataplane or in the controller; and what the switch refuses to delete keeps its resources until a later call
 * deletes it.
 */
@Timeout(60)
class ControllerReshapeTest {
    /** Lets P4Runtime Writes through, then refuses some: a switch that fails in the middle of a change. */
    private static final class FailingWrites implements ServerInterceptor {
        private final AtomicInteger pass = new AtomicInteger(Integer.MAX_VALUE);
        private final AtomicInteger fail = new AtomicInteger();

        /** The next {@code passing} Writes go through, the {@code failing} after them are refused. */
        void arm(final int passing, final int failing) {
            fail.set(failing);
            pass.set(passing);
        }

        @Override
        public <Q, A> ServerCall.Listener<Q> interceptCall(
                final ServerCall<Q, A> call, final Metadata headers, final ServerCallHandler<Q, A> next) {
            if (call.getMethodDescriptor()
                            .getFullMethodName()
                            .equals(P4RuntimeGrpc.getWriteMethod().getFullMethodName())
                    && pass.getAndDecrement() <= 0
                    && fail.getAndDecrement() > 0) {
                call.close(Status.UNAVAILABLE.withDescription("injected failure"), new Metadata());
                return new ServerCall.Listener<>() {};
            }
            return next.startCall(call, headers);
        }
    }

    private static JobSpec spec(final int id, final int n) {
        final List<InetSocketAddress> w = new ArrayList<>();
        for (int r = 0; r < n; r++) {
            w.add(new InetSocketAddress("127.0.0.1", 47000 + r));
        }
        return new JobSpec(id, 0, 64, 16, w);
    }

    private static long entriesOf(final SwitchController c, final int jobId) {
        long n = 0;
        for (final String table : List.of(P4Names.JOB_TABLE, P4Names.WORKER_TABLE, P4Names.RESULT_TABLE)) {
            for (final TableEntry e : c.readEntries(table)) {
                if (Bytestrings.decode(e.getMatch(0).getExact().getValue(), 32, "job") == jobId) {
                    n++;
                }
            }
        }
        return n;
    }

    @Test
    void aReshapeTheSwitchRefusesLeavesNeitherShapeAndFreesItsResources() {
        final FailingWrites faults = new FailingWrites();
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchRuntimeServer p4 =
                        SwitchRuntimeServer.start(sw, "127.0.0.1", 0, 0, InsecureServerCredentials.create(), faults);
                SwitchController c = SwitchController.connect(ControllerOptions.of("127.0.0.1", p4.port()))) {
            c.setPipeline(PipelineConfig.softwareSwitch());
            final RegisteredJob two = c.registerJob(spec(7, 2));
            assertEquals(1, p4.liveJobs().size());
            assertEquals(5, entriesOf(c, 7)); // job_table, 2 worker rows, 2 result rows
            // Three workers instead of two: the old shape is removed (two writes), then the new one's first write
            // fails.
            faults.arm(2, 1);
            final SwitchControlException e =
                    assertThrows(SwitchControlException.class, () -> c.registerJob(spec(7, 3)));
            assertTrue(e.getMessage().contains("injected failure"), e.getMessage());
            assertNull(c.job(7), "a phantom job stayed registered");
            assertEquals(0, entriesOf(c, 7));
            assertEquals(0, c.readMulticastGroups().size());
            assertEquals(0, p4.liveJobs().size());
            assertEquals(0, c.leftoverJobs());
            // Its resources are free: the same job installs again on the lowest index and group.
            final RegisteredJob again = c.registerJob(spec(7, 3));
            assertEquals(two.resources().jobIndex(), again.resources().jobIndex());
            assertEquals(two.resources().multicastGroup(), again.resources().multicastGroup());
            assertEquals(7, entriesOf(c, 7));
        }
    }

    @Test
    void whatTheSwitchRefusesToDeleteKeepsItsResourcesUntilALaterCallDeletesIt() {
        final FailingWrites faults = new FailingWrites();
        try (SoftwareSwitch sw = SoftwareSwitch.start(SwitchOptions.loopback(1));
                SwitchRuntimeServer p4 =
                        SwitchRuntimeServer.start(sw, "127.0.0.1", 0, 0, InsecureServerCredentials.create(), faults);
                SwitchController c = SwitchController.connect(ControllerOptions.of("127.0.0.1", p4.port()))) {
            c.setPipeline(PipelineConfig.softwareSwitch());
            // The workers, results and group go in; the job_table entry and then the undo are refused.
            faults.arm(1, 2);
            assertThrows(SwitchControlException.class, () -> c.registerJob(spec(8, 2)));
            assertNull(c.job(8));
            assertEquals(1, c.leftoverJobs());
            assertEquals(4, entriesOf(c, 8), "the undo was refused, so the worker and result rows are still there");
            // The next call's cleanup is refused too: the job it installs does not get the leftover's resources.
            faults.arm(0, 1);
            final RegisteredJob other = c.registerJob(spec(9, 2));
            assertEquals(1, c.leftoverJobs());
            assertNotEquals(0, other.resources().jobIndex(), "took the job index the leftover still holds");
            assertNotEquals(1, other.resources().multicastGroup(), "took the group the leftover still holds");
            // The switch takes writes again: the next call deletes the leftover and frees what it held.
            c.removeJob(9);
            assertEquals(0, c.leftoverJobs());
            assertEquals(0, entriesOf(c, 8));
            assertEquals(0, c.readMulticastGroups().size());
            assertEquals(0, c.registerJob(spec(10, 2)).resources().jobIndex());
        }
    }
}
