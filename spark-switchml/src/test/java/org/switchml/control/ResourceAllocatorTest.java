package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.protocol.JobSpec;

/** How the controller hands out a switch's job indices, slot ranges, multicast groups and worker rows. */
@Timeout(value = 1, unit = TimeUnit.MINUTES)
class ResourceAllocatorTest {
    private static JobSpec job(final int id, final int pool, final int workers) {
        final List<InetSocketAddress> w = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            w.add(new InetSocketAddress("10.0.0." + (r + 1), 5000));
        }
        return new JobSpec(id, 0, 64, pool, w);
    }

    @Test
    void jobsGetTheLowestFreeIndexGroupAndFirstFittingSlots() {
        final ResourceAllocator a = new ResourceAllocator(64, 4, 8, 16);
        final JobResources j1 = a.allocate(job(1, 16, 2), null);
        final JobResources j2 = a.allocate(job(2, 32, 2), null);
        assertEquals(new JobResources(0, 0, 16, 1), j1);
        assertEquals(new JobResources(1, 16, 32, 2), j2);
        a.release(1);
        // The freed run of 16 at the start fits a job of 8; a job of 24 fits only after the second.
        assertEquals(new JobResources(0, 0, 8, 1), a.allocate(job(3, 8, 2), null));
        final JobResources j4 = a.allocate(job(4, 16, 2), null);
        assertEquals(48, j4.poolBase());
        assertEquals(2, j4.jobIndex());
        assertEquals(3, j4.multicastGroup());
        assertEquals(j2, a.of(2));
    }

    @Test
    void whatDoesNotFitIsRefusedNamingWhat() {
        final ResourceAllocator a = new ResourceAllocator(32, 2, 8, 6);
        a.allocate(job(1, 16, 4), null);
        final SwitchControlException rows =
                assertThrows(SwitchControlException.class, () -> a.allocate(job(2, 8, 3), null));
        assertEquals(Status.Code.RESOURCE_EXHAUSTED, rows.code());
        assertTrue(rows.getMessage().contains("4 of 6 rows in use"), rows.getMessage());
        final SwitchControlException slots =
                assertThrows(SwitchControlException.class, () -> a.allocate(job(3, 17, 1), null));
        assertTrue(slots.getMessage().contains("no free run of 17 pool slots (16 of 32 free)"), slots.getMessage());
        a.allocate(job(4, 8, 1), null);
        final SwitchControlException indices =
                assertThrows(SwitchControlException.class, () -> a.allocate(job(5, 1, 1), null));
        assertTrue(indices.getMessage().contains("all 2 job indices are in use"), indices.getMessage());
        assertThrows(IllegalArgumentException.class, () -> a.allocate(job(6, 33, 1), null), "more than the pool");
        final SwitchControlException twice =
                assertThrows(SwitchControlException.class, () -> a.allocate(job(1, 1, 1), null));
        assertEquals(Status.Code.ALREADY_EXISTS, twice.code());
    }

    @Test
    void requestedResourcesAreCheckedAgainstLiveJobs() {
        final ResourceAllocator a = new ResourceAllocator(64, 4, 8, 16);
        a.allocate(job(1, 16, 2), new JobResources(2, 8, 16, 5));
        final SwitchControlException overlap = assertThrows(
                SwitchControlException.class, () -> a.allocate(job(2, 8, 2), new JobResources(0, 20, 8, 1)));
        assertTrue(overlap.getMessage().contains("overlaps the pool"), overlap.getMessage());
        assertThrows(
                SwitchControlException.class,
                () -> a.allocate(job(3, 8, 2), new JobResources(2, 40, 8, 1)),
                "the job index is held");
        assertThrows(
                SwitchControlException.class,
                () -> a.allocate(job(4, 8, 2), new JobResources(1, 40, 8, 5)),
                "the group is held");
        assertThrows(
                IllegalArgumentException.class,
                () -> a.allocate(job(5, 8, 2), new JobResources(1, 60, 8, 1)),
                "past the last slot");
        // A positive control: what overlaps nothing is taken as asked.
        assertEquals(new JobResources(1, 24, 8, 1), a.allocate(job(6, 8, 2), new JobResources(1, 24, 8, 1)));
        assertFalse(a.of(6).poolOverlaps(a.of(1)));
    }
}
