package org.switchml.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.switchml.dataplane.p4runtime.SwitchRuntimeServer;
import org.switchml.p4info.P4Names;
import org.switchml.protocol.DropReason;
import org.switchml.protocol.JobSpec;
import org.switchml.protocol.SwitchCounters;
import org.switchml.testing.Repo;
import org.switchml.testing.UdpPeer;
import p4.v1.P4RuntimeOuterClass.Update;

/**
 * Replays every p4/tests/*.stf trace (the P4 program's conformance traces) against the software switch,
 * through the control path: {@code add} lines become P4Runtime table writes and {@code mc_*} lines a
 * multicast group write, sent by a {@link SwitchController} to a {@link SwitchRuntimeServer}; packets go
 * over real loopback UDP. Mapping (p4/tests/README.md): STF port p is one UDP socket, and every
 * 10.0.0.p / 50000+p in an entry stands for that socket's address; a frame whose source is not a port's
 * endpoint is sent from an extra, unregistered socket; the switch has one lane, which every lane port of a
 * trace goes to. Only the SwitchML part of a frame (bytes 42 on) is sent and compared. Frames a UDP socket
 * cannot produce (bad IPv4, truncated, non-UDP, other ports) are skipped with a printed reason.
 *
 * <p>Ordering without sleeps: after each packet the runner waits (bounded) for its expected datagrams,
 * or, when none are expected, sends a contribution of a one-worker fence job and waits for its result;
 * the switch's single lane handles datagrams in order, so the fence result proves the packet was handled
 * and anything it sent has arrived. Each trace ends by comparing the drop_reason counter, read over
 * P4Runtime, with the drops the trace's comments announce.
 */
class StfConformanceTest {
    private static final long RECEIVE_TIMEOUT_MS = 5_000;
    private static final int FENCE_JOB = 0xFFFF_F000;
    private static final Pattern ADD = Pattern.compile("^add (\\S+) (.*?)\\s*(\\S+)\\((.*)\\)$");
    private static final Pattern DROPPED = Pattern.compile("->\\s+dropped: (\\w+) \\(drop_reason\\[(\\d+)]\\)");
    private static final Pattern SUMMARY = Pattern.compile("^# end of trace; drops by reason: (.*)$");

    @TestFactory
    Stream<DynamicTest> everyTraceReplaysOnTheSoftwareSwitch() throws IOException {
        final Path dir = Repo.p4Dir().resolve("tests");
        final List<Path> traces;
        try (Stream<Path> files = Files.list(dir)) {
            traces = files.filter(p -> p.toString().endsWith(".stf")).sorted().toList();
        }
        if (traces.isEmpty()) {
            fail("no .stf traces in " + dir);
        }
        return traces.stream().map(p -> DynamicTest.dynamicTest(p.getFileName().toString(), () -> replay(p)));
    }

    /** One parsed line of a trace. */
    private record Line(int number, String text, String comment) {}

    private static void replay(final Path trace) throws IOException {
        final List<String> raw = Files.readAllLines(trace, StandardCharsets.UTF_8);
        try (ControlTestBed bed = ControlTestBed.start(1);
                Runner run = new Runner(bed, trace.getFileName().toString())) {
            String comment = "";
            final List<Line> lines = new ArrayList<>();
            for (int i = 0; i < raw.size(); i++) {
                final String l = raw.get(i).strip();
                if (l.startsWith("#")) {
                    comment = l;
                    final Matcher m = SUMMARY.matcher(l);
                    if (m.matches()) {
                        run.summary = m.group(1);
                    }
                } else if (!l.isEmpty()) {
                    lines.add(new Line(i + 1, l, comment));
                }
            }
            for (int i = 0; i < lines.size(); i++) {
                final Line line = lines.get(i);
                final String[] w = line.text().split("\\s+");
                switch (w[0]) {
                    case "add" -> run.add(line);
                    case "mc_mgrp_create" -> run.groups.put(Integer.parseInt(w[1]), new ArrayList<>());
                    case "mc_node_create" ->
                        run.nodes.add(new MulticastReplica(Integer.parseInt(w[2]), Integer.parseInt(w[1])));
                    case "mc_node_associate" -> {
                        run.groups.get(Integer.parseInt(w[1])).add(run.nodes.get(Integer.parseInt(w[2])));
                        run.dirty.add(Integer.parseInt(w[1]));
                    }
                    case "packet" -> {
                        final List<Line> expects = new ArrayList<>();
                        while (i + 1 < lines.size() && lines.get(i + 1).text().startsWith("expect ")) {
                            expects.add(lines.get(++i));
                        }
                        run.packet(line, expects);
                    }
                    default -> fail(run.where(line) + ": unknown STF command " + w[0]);
                }
            }
            run.finish();
        }
    }

    /** State of one replay. */
    private static final class Runner implements AutoCloseable {
        final ControlTestBed bed;
        final String name;
        final InetSocketAddress lane;
        final Map<Integer, UdpPeer> ports = new TreeMap<>();
        final Map<String, UdpPeer> strays = new LinkedHashMap<>();
        final Map<Integer, List<MulticastReplica>> groups = new TreeMap<>();
        final List<MulticastReplica> nodes = new ArrayList<>();
        final Set<Integer> dirty = new TreeSet<>();
        final Set<Integer> written = new HashSet<>();
        final long[] expectedDrops = new long[DropReason.values().length];
        final UdpPeer fence = new UdpPeer();
        final int fenceSecret;
        int fenceSeq;
        int skipped;
        String summary;

        Runner(final ControlTestBed bed, final String name) {
            this.bed = bed;
            this.name = name;
            this.lane = bed.sw.address().laneAddresses().get(0);
            // The fence job holds resources no trace uses (job index 63, the last pool slot, group 4095).
            fenceSecret = bed.controller
                    .registerJob(
                            new JobSpec(FENCE_JOB, 1, 1, 1, List.of(fence.address())),
                            List.of(),
                            new JobResources(63, 2047, 1, 4095))
                    .spec()
                    .secret();
        }

        String where(final Line line) {
            return name + ":" + line.number();
        }

        UdpPeer port(final int p) {
            return ports.computeIfAbsent(p, x -> new UdpPeer());
        }

        /** Maps a trace value onto loopback: 10.0.0.p → 127.0.0.1, UDP 50000+p → port p's socket. */
        long map(final String field, final long value) {
            if ((field.equals(P4Names.F_SRC_ADDR) || field.equals(P4Names.P_DST_IP)) && value >>> 8 == 0x0A0000) {
                return 0x7F000001L;
            }
            if ((field.equals(P4Names.F_SRC_PORT) || field.equals(P4Names.P_DST_PORT))
                    && value > 50_000
                    && value <= 50_008) {
                return port((int) (value - 50_000)).address().getPort();
            }
            return value;
        }

        void add(final Line line) {
            final Matcher m = ADD.matcher(line.text());
            if (!m.matches()) {
                fail(where(line) + ": cannot parse " + line.text());
            }
            final Map<String, Long> match = values(m.group(2).split("\\s+"));
            final Map<String, Long> params = values(m.group(4).split(",\\s*"));
            bed.controller.insertEntry(m.group(1), match, m.group(3), params);
        }

        private Map<String, Long> values(final String[] pairs) {
            final Map<String, Long> out = new LinkedHashMap<>();
            for (final String pair : pairs) {
                if (pair.isBlank()) {
                    continue;
                }
                final int colon = pair.lastIndexOf(':');
                final String key = pair.substring(0, colon).strip();
                final String v = pair.substring(colon + 1).strip();
                final long value = v.startsWith("0x") ? Long.parseUnsignedLong(v.substring(2), 16) : Long.parseLong(v);
                out.put(key, map(key, value));
            }
            return out;
        }

        /** Writes the multicast groups built since the last packet (INSERT, or MODIFY once written). */
        void flushGroups() {
            for (final int g : dirty) {
                bed.controller.writeMulticastGroup(
                        written.add(g) ? Update.Type.INSERT : Update.Type.MODIFY, g, groups.get(g));
            }
            if (!dirty.isEmpty()) {
                // Read back: each group holds its replicas (port, instance = rank) as the trace built them.
                for (final p4.v1.P4RuntimeOuterClass.MulticastGroupEntry e : bed.controller.readMulticastGroups()) {
                    final List<MulticastReplica> got = e.getReplicasList().stream()
                            .map(r -> new MulticastReplica(r.getEgressPort(), r.getInstance()))
                            .toList();
                    if (groups.containsKey(e.getMulticastGroupId())) {
                        assertEquals(
                                groups.get(e.getMulticastGroupId()),
                                got,
                                name + ": multicast group " + e.getMulticastGroupId() + " read back");
                    }
                }
            }
            dirty.clear();
        }

        void packet(final Line line, final List<Line> expects) {
            flushGroups();
            final String[] w = line.text().split("\\s+", 3);
            final byte[] frame = HexFormat.of().parseHex(w[2].replace(" ", ""));
            final String why = unproducible(frame);
            if (why != null) {
                skipped++;
                System.out.println("[stf] " + where(line) + " skipped: " + why);
                if (!expects.isEmpty()) {
                    fail(where(line) + ": a skipped frame has expectations; the runner cannot check them");
                }
                return;
            }
            final Matcher dropped = DROPPED.matcher(line.comment());
            if (dropped.find()) {
                expectedDrops[DropReason.valueOf(dropped.group(1)).ordinal()]++;
            }
            sender(frame).send(Arrays.copyOfRange(frame, 42, frame.length), lane);
            if (expects.isEmpty()) {
                fence(line);
                return;
            }
            for (final Line e : expects) {
                final String[] x = e.text().split("\\s+", 3);
                final byte[] want = HexFormat.of().parseHex(x[2].replace(" ", ""));
                final byte[] got = port(Integer.parseInt(x[1])).receive(RECEIVE_TIMEOUT_MS);
                assertNotNull(
                        got,
                        where(e) + ": nothing arrived on STF port " + x[1] + " within " + RECEIVE_TIMEOUT_MS + " ms");
                final byte[] part = Arrays.copyOfRange(want, 42, want.length);
                if (!Arrays.equals(part, got)) {
                    fail(where(e) + ": STF port " + x[1] + " received "
                            + HexFormat.of().formatHex(got)
                            + "\n  expected " + HexFormat.of().formatHex(part) + "\n  (first difference at byte "
                            + (42 + Arrays.mismatch(part, got)) + " of the frame)");
                }
            }
            fence(line);
        }

        /** The socket a frame comes from: its STF port's, or an unregistered one for any other source. */
        UdpPeer sender(final byte[] frame) {
            final long ip = ((frame[26] & 0xFFL) << 24)
                    | ((frame[27] & 0xFFL) << 16)
                    | ((frame[28] & 0xFFL) << 8)
                    | (frame[29] & 0xFFL);
            final int sport = ((frame[34] & 0xFF) << 8) | (frame[35] & 0xFF);
            final int p = (int) (ip & 0xFF);
            if (ip >>> 8 == 0x0A0000 && sport == 50_000 + p) {
                return port(p);
            }
            return strays.computeIfAbsent(Long.toHexString(ip) + ":" + sport, x -> new UdpPeer());
        }

        /** Why a UDP socket cannot send this frame's SwitchML datagram as the P4 switch would see it, or null. */
        static String unproducible(final byte[] f) {
            if (f.length < 34 || (f[12] & 0xFF) != 0x08 || f[13] != 0) {
                return "not an IPv4 frame";
            }
            if ((f[14] & 0x0F) != 5) {
                return "IPv4 header with options (IHL " + (f[14] & 0x0F) + ")";
            }
            if (f[23] != 17) {
                return "IPv4 protocol " + (f[23] & 0xFF) + ", not UDP";
            }
            int sum = 0;
            for (int i = 14; i < 34; i += 2) {
                sum += ((f[i] & 0xFF) << 8) | (f[i + 1] & 0xFF);
            }
            while (sum >>> 16 != 0) {
                sum = (sum & 0xFFFF) + (sum >>> 16);
            }
            if (sum != 0xFFFF) {
                return "bad IPv4 header checksum";
            }
            final int ipLen = ((f[16] & 0xFF) << 8) | (f[17] & 0xFF);
            if (f.length < 42 || ipLen != f.length - 14) {
                return "IPv4 total length " + ipLen + " disagrees with the frame (" + (f.length - 14) + " bytes)";
            }
            final int dport = ((f[36] & 0xFF) << 8) | (f[37] & 0xFF);
            if ((dport & 0xFFF0) != 0xBEE0) {
                return "UDP to port " + dport + ", not a SwitchML lane";
            }
            final int udpLen = ((f[38] & 0xFF) << 8) | (f[39] & 0xFF);
            if (udpLen != ipLen - 20) {
                return "UDP length " + udpLen + " disagrees with IPv4 (" + (ipLen - 20) + ")";
            }
            return null;
        }

        /** A round trip through the fence job; then every socket must be empty. */
        void fence(final Line after) {
            final int g = fenceSeq++;
            fence.send(UdpPeer.contribution(FENCE_JOB, 1, fenceSecret, 0, g, 1, new int[] {g}), lane);
            assertNotNull(fence.receive(RECEIVE_TIMEOUT_MS), where(after) + ": fence result did not arrive");
            for (final Map.Entry<Integer, UdpPeer> p : ports.entrySet()) {
                final byte[] extra = p.getValue().poll();
                if (extra != null) {
                    fail(where(after) + ": unexpected datagram on STF port " + p.getKey() + ": "
                            + HexFormat.of().formatHex(extra));
                }
            }
            for (final Map.Entry<String, UdpPeer> s : strays.entrySet()) {
                final byte[] extra = s.getValue().poll();
                if (extra != null) {
                    fail(where(after) + ": unexpected datagram to unregistered source " + s.getKey());
                }
            }
        }

        void finish() {
            final SwitchCounters counters = bed.controller.readSwitchCounters();
            final StringBuilder want = new StringBuilder();
            for (final DropReason r : DropReason.values()) {
                if (expectedDrops[r.ordinal()] > 0) {
                    want.append(want.length() == 0 ? "" : ", ")
                            .append(r)
                            .append('=')
                            .append(expectedDrops[r.ordinal()]);
                }
            }
            if (skipped == 0 && summary != null) {
                assertEquals(
                        summary,
                        want.length() == 0 ? "none" : want.toString(),
                        name + ": per-packet comments disagree with the trace's summary");
            }
            for (final DropReason r : DropReason.values()) {
                assertEquals(
                        expectedDrops[r.ordinal()],
                        counters.drops(r),
                        name + ": drop_reason[" + r.ordinal() + "] (" + r + ") read over P4Runtime");
            }
            assertEquals(0, counters.notSwitchml(), name + ": NOT_SWITCHML");
            System.out.println("[stf] " + name + ": passed (" + skipped + " frames skipped; drops " + want + ")");
        }

        @Override
        public void close() {
            fence.close();
            ports.values().forEach(UdpPeer::close);
            strays.values().forEach(UdpPeer::close);
        }
    }
}
