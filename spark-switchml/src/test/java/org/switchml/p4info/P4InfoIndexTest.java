package org.switchml.p4info;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.TextFormat;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.switchml.protocol.DropReason;
import org.switchml.testing.Repo;
import p4.config.v1.P4InfoOuterClass.P4Info;

/** P4Info text parsing with Spark on the classpath, name resolution, and P4Runtime byte strings. */
class P4InfoIndexTest {

    /** p4/switchml.p4info.txt, read with protobuf's own TextFormat: a source independent of the index. */
    private static P4Info repositoryP4Info() throws Exception {
        final String text = Files.readString(Repo.p4Dir().resolve("switchml.p4info.txt"), StandardCharsets.UTF_8);
        final P4Info.Builder b = P4Info.newBuilder();
        TextFormat.getParser().merge(text, b);
        return b.build();
    }

    @Test
    void bundledCopyIsTheRepositoryP4InfoAndParsesNextToSpark() throws Exception {
        // Spark (provided scope) is on this classpath with its own protobuf declaration; the pin keeps
        // protobuf 3, whose reflection the ONOS gencode needs for TextFormat.
        Class.forName("org.apache.spark.SparkContext");
        final P4InfoIndex bundled = P4InfoIndex.bundled();
        assertEquals(repositoryP4Info(), bundled.p4info());
        final String printed = TextFormat.printer().printToString(bundled.p4info());
        final P4Info.Builder again = P4Info.newBuilder();
        TextFormat.getParser().merge(printed, again);
        assertEquals(bundled.p4info(), again.build());
    }

    @Test
    void namesResolveToTheP4InfoIdsAndWidths() throws Exception {
        final P4InfoIndex p4 = P4InfoIndex.bundled();
        final P4InfoIndex.Table worker = p4.table("SwitchMLIngress.worker_table");
        assertEquals(worker, p4.table("worker_table")); // alias
        // Ids and widths as p4/switchml.p4info.txt states them.
        assertEquals(41575116, worker.id());
        assertEquals(3, worker.field("hdr.udp.src_port").id());
        assertEquals(16, worker.field("hdr.udp.src_port").bitwidth());
        final P4InfoIndex.Action setJob = p4.action("SwitchMLIngress.set_job");
        assertEquals(23654529, setJob.id());
        assertEquals(33285165, p4.action("SwitchMLIngress.set_worker").id());
        assertEquals(302339003, p4.counter("SwitchMLIngress.drop_reason").id());
        assertTrue(worker.actionIds()
                .contains(p4.action("SwitchMLIngress.set_worker").id()));
        assertEquals(16, setJob.param("k").bitwidth());
        assertEquals(32, setJob.param("secret").bitwidth());
        // One cell per DropReason, then NOT_SWITCHML (P4 only).
        assertEquals(DropReason.values().length, P4Names.NOT_SWITCHML_INDEX);
        assertEquals(10, p4.counter("SwitchMLIngress.drop_reason").size());
        assertEquals(
                P4Names.NOT_SWITCHML_INDEX + 1,
                p4.counter("SwitchMLIngress.drop_reason").size());
        assertEquals(2048, p4.registerSize("SwitchMLIngress.aggregator.slot_owner"));
        final IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> p4.table("no_such_table"));
        assertTrue(e.getMessage().contains("no_such_table"), e.getMessage());
        assertEquals(List.of(), p4.differencesFrom(new P4InfoIndex(repositoryP4Info())));
    }

    @Test
    void differencesNameWhatAnotherP4InfoLacks() {
        final P4InfoIndex p4 = P4InfoIndex.bundled();
        final P4Info.Builder b = p4.p4info().toBuilder();
        b.getTablesBuilder(0).getPreambleBuilder().setName("SwitchMLIngress.other_table");
        b.getActionsBuilderList().stream()
                .filter(a -> a.getPreamble().getName().equals("SwitchMLIngress.set_job"))
                .findFirst()
                .orElseThrow()
                .getParamsBuilder(0)
                .setBitwidth(8);
        final String diff = String.join("; ", p4.differencesFrom(new P4InfoIndex(b.build())));
        assertTrue(diff.contains("table SwitchMLIngress.job_table is missing"), diff);
        assertTrue(diff.contains("action SwitchMLIngress.set_job has parameters"), diff);
    }

    @Test
    void byteStringsAreCanonicalAndChecked() {
        assertArrayEquals(new byte[] {0}, Bytestrings.encode(0, 32, "x").toByteArray());
        assertArrayEquals(new byte[] {1, 0}, Bytestrings.encode(256, 16, "x").toByteArray());
        assertArrayEquals(
                new byte[] {(byte) 0xC3, 0x51},
                Bytestrings.encode(50001, 16, "x").toByteArray());
        assertEquals(0x0200000000FEL, Bytestrings.decode(Bytestrings.encode(0x0200000000FEL, 48, "mac"), 48, "mac"));
        assertEquals(7, Bytestrings.decode(ByteString.copyFrom(new byte[] {0, 0, 0, 7}), 32, "padded"));
        assertThrows(IllegalArgumentException.class, () -> Bytestrings.encode(65536, 16, "port"));
        final IllegalArgumentException wide = assertThrows(
                IllegalArgumentException.class,
                () -> Bytestrings.decode(ByteString.copyFrom(new byte[5]), 32, "job id"));
        assertTrue(wide.getMessage().contains("job id") && wide.getMessage().contains("5 bytes"), wide.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Bytestrings.decode(ByteString.EMPTY, 8, "rank"));
        assertThrows(
                IllegalArgumentException.class,
                () -> Bytestrings.decode(ByteString.copyFrom(new byte[] {2}), 1, "bit"));
    }
}
