package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.connect.proto.Command;
import org.apache.spark.connect.proto.Plan;
import org.apache.spark.connect.proto.Relation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.switchml.auth.BearerToken;
import org.switchml.auth.TlsFiles;
import org.switchml.examples.ConnectMl;
import org.switchml.service.JobServiceClient;
import org.switchml.service.Occupancy;

/**
 * Spark Connect through the user's door: a Connect server started from Spark's own jars by
 * {@code bin/switchml-submit} (class {@code org.apache.spark.sql.connect.service.SparkConnectServer}, Spark's
 * Connect server jar on {@code --jars}) on a local-cluster of two executor JVMs, with
 * {@code spark.connect.ml.backend.classes} naming spark-switchml's plugin and a standalone switch process
 * ({@code bin/switchml-switch}) as its switch. A Java client ({@link ConnectMl}) sends over gRPC the messages
 * PySpark's {@code pyspark.ml} sends for a stock {@code LogisticRegression}: the fit trains through the switch
 * (the drop-in's report, the switch's own counters and the driver's metrics move), the model answers as MLlib's
 * (coefficients within the drop-in's parity tolerance of a stock fit, summary, transform, save, load as a stock
 * model); a session without the setting trains the same request with stock MLlib and leaves the switch alone;
 * a fit interrupted by its client, or whose client is gone past the detach timeout, ends its barrier stage and
 * leaves no job on the switch within its bound; two sessions fit at once.
 *
 * <p>The client's classpath has one copy of the Connect protos, the server jar's (with its relocated gRPC), and
 * the server's classpath only Spark's jars, the Connect server jar and spark-switchml's shaded jar.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class SparkConnectIT {
    private static final long START_MS = 180_000;
    private static final long CALL_MS = 300_000;
    private static final long SEED = Long.getLong("switchml.seed", 20261206L);
    private static final String PLUGIN = "org.switchml.spark.connect.SwitchMLBackend";
    private static final String BACKEND_KEY = "spark.connect.ml.backend.classes";
    /** The server's bounds: a stuck allreduce, and a reattachable execution without its client. */
    private static final long RESULT_TIMEOUT_MS = 10_000;

    private static final long DETACHED_TIMEOUT_MS = 1_000;
    private static final long MAINTENANCE_MS = 250;
    private static final long STREAM_MS = 2_000;

    private static Path work;
    private static Path metrics;
    private static Path data;
    private static Path separable;
    private static List<double[]> rows;
    private static Jvm sw;
    private static Jvm server;
    private static JobServiceClient operator;
    private static ConnectMl client;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        System.out.println("[it] seed " + SEED + " (-Dswitchml.seed=" + SEED + " repeats this run)");
        final Path sparkHome = existing("switchml.it.sparkHome");
        existing("switchml.it.libraryJar");
        final Path connectJar = existing("switchml.it.connectJar");
        work = Path.of(System.getProperty("switchml.it.work") + "-connect");
        deleteTree(work);
        Files.createDirectories(work);
        metrics = Files.createDirectories(work.resolve("metrics"));
        // Two partitions for the server (its maxPartitionBytes below), so each fit's barrier stage has two tasks
        // and two fits fit in the cluster's four task slots at once.
        data = work.resolve("train.libsvm");
        rows = writeLogistic(data, new SplittableRandom(SEED), 300_000, 10);
        separable = work.resolve("separable.libsvm");
        writeRandomLabels(separable, new SplittableRandom(SEED + 1), 40_000, 100_000, 25);

        final String token = "connect-server-token-" + SEED;
        final Path tokenFile = privateFile(work.resolve("switch.token"), token + "\n");
        sw = Jvm.launch(
                "switchml-switch",
                work.resolve("switch.log"),
                Map.of("SWITCH_HEAP", "512m"),
                List.of(),
                "switchml-switch",
                List.of(
                        "--port",
                        "0",
                        "--lanes",
                        "2",
                        "--service-port",
                        "0",
                        "--token-file",
                        tokenFile.toString(),
                        "--renew-interval-ms",
                        "2000")); // five JVMs on two cores: see SharedSwitchIT
        final Matcher ready = sw.await("jobs 127\\.0\\.0\\.1:(\\d+)", START_MS);
        final int servicePort = Integer.parseInt(ready.group(1));
        operator = JobServiceClient.connect(
                "127.0.0.1",
                servicePort,
                TlsFiles.client("", "", "", BearerToken.of(token), "127.0.0.1", "the job service"));

        final Map<String, String> env = Map.of(
                "SPARK_HOME", sparkHome.toString(), "SPARK_LOCAL_IP", "127.0.0.1", "SPARK_SCALA_VERSION", "2.13");
        final List<String> args = new ArrayList<>(List.of(
                "--master",
                "local-cluster[2,2,1024]",
                "--driver-memory",
                "1g",
                "--jars",
                connectJar.toString(),
                "--conf",
                BACKEND_KEY + "=" + PLUGIN,
                "--conf",
                "spark.connect.grpc.binding.address=127.0.0.1",
                "--conf",
                "spark.connect.grpc.binding.port=0",
                "--conf",
                "spark.connect.execute.manager.detachedTimeout=" + DETACHED_TIMEOUT_MS + "ms",
                "--conf",
                "spark.connect.execute.manager.maintenanceInterval=" + MAINTENANCE_MS + "ms",
                // A server notices a client gone only when its response stream ends: at most this long after it
                // began (default 2 minutes); a live client reattaches then, as ConnectMl and PySpark do.
                "--conf",
                "spark.connect.execute.reattachable.senderMaxStreamDuration=" + STREAM_MS + "ms",
                "--conf",
                "spark.driver.host=127.0.0.1",
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.sql.files.maxPartitionBytes=" + (Files.size(data) / 2 + 1),
                "--conf",
                "spark.switchml.jobService.address=127.0.0.1:" + servicePort,
                "--conf",
                "spark.switchml.auth.tokenFile=" + tokenFile,
                "--conf",
                "spark.switchml.resultTimeout=" + RESULT_TIMEOUT_MS + "ms",
                // Two executors: sums taken in one executor's memory would send nothing through the switch.
                "--conf",
                "spark.switchml.localShortcut=false",
                "--conf",
                "spark.metrics.conf.driver.sink.csv.class=org.apache.spark.metrics.sink.CsvSink",
                "--conf",
                "spark.metrics.conf.driver.sink.csv.directory=" + metrics,
                "--conf",
                "spark.metrics.conf.driver.sink.csv.period=1",
                "--conf",
                "spark.metrics.conf.driver.sink.csv.unit=seconds",
                "--class",
                "org.apache.spark.sql.connect.service.SparkConnectServer",
                "spark-internal"));
        server = Jvm.launch("connect-server", work.resolve("server.log"), env, List.of(), "switchml-submit", args);
        port = Integer.parseInt(server.await("Spark Connect server started at: \\S+:(\\d+)", START_MS)
                .group(1));
        System.out.println(
                "[it] Connect server on 127.0.0.1:" + port + ", switch job service on 127.0.0.1:" + servicePort);
        client = ConnectMl.connect("127.0.0.1", port, CALL_MS);
    }

    @AfterAll
    static void stop() {
        if (client != null) {
            client.close();
        }
        if (operator != null) {
            operator.close();
        }
        if (server != null) {
            server.close();
        }
        if (sw != null) {
            sw.close();
        }
    }

    // ---------------------------------------------------------------------------------------------- the tests

    @Test
    void aStockLogisticRegressionTrainsThroughTheSwitchAndAnswersAsMllibs() throws Exception {
        final Map<String, Object> params = params(100, 0.01);
        assertEquals(PLUGIN, client.getConf(BACKEND_KEY), "the server's conf reaches the session");
        final long switchBefore = operator.totals().jobs().packetsIn();
        final long metricBefore = driverCounter("switch.packetsIn");

        final String uid = uid();
        final String model =
                client.fit(ConnectMl.LOGISTIC_REGRESSION, uid, params, client.read("libsvm", data.toString()));
        final String report = fitReport(uid);
        System.out.println("[it] " + report);
        assertTrue(report.contains("viaSwitch=true") && report.contains("fallbacks=0"), report);
        final long reportedIn = Long.parseLong(field(report, "packetsIn"));
        assertTrue(reportedIn > 0, "the drop-in sent nothing through the switch: " + report);
        final long switchAfter = operator.totals().jobs().packetsIn();
        assertTrue(
                switchAfter - switchBefore >= reportedIn,
                "the switch counted " + (switchAfter - switchBefore) + " packets of the fit, the drop-in "
                        + reportedIn);
        final long metric = awaitDriverCounter("switch.packetsIn", v -> v >= metricBefore + reportedIn);
        System.out.println("[it] switch packets in: switch " + switchBefore + " -> " + switchAfter + ", driver metric "
                + metricBefore + " -> " + metric);

        final Fitted viaSwitch = fetch(client, model);
        assertEquals(
                viaSwitch.history.length, viaSwitch.iterations + 1, "objectiveHistory has totalIterations + 1 values");
        assertTrue(
                viaSwitch.iterations > 3 && viaSwitch.history[viaSwitch.iterations] < viaSwitch.history[0],
                "no descent: " + Arrays.toString(viaSwitch.history));

        // The same request in a session that unset the plugin: stock MLlib, the switch untouched.
        try (ConnectMl stockSession = client.newSession()) {
            stockSession.unsetConf(BACKEND_KEY);
            assertTrue(stockSession.getConf(BACKEND_KEY) == null
                    || stockSession.getConf(BACKEND_KEY).isEmpty());
            final String stockUid = uid();
            final long before = operator.totals().jobs().packetsIn();
            final String stockModel = stockSession.fit(
                    ConnectMl.LOGISTIC_REGRESSION, stockUid, params, stockSession.read("libsvm", data.toString()));
            assertEquals(before, operator.totals().jobs().packetsIn(), "the stock fit went through the switch");
            assertFalse(
                    server.output().contains(stockUid + ": FitReport"), "the drop-in trained the stock session's fit");
            final Fitted stock = fetch(stockSession, stockModel);
            final double rel = relativeL2(viaSwitch.withIntercept(), stock.withIntercept());
            final double fSwitch = viaSwitch.history[viaSwitch.iterations];
            final double fStock = stock.history[stock.iterations];
            System.out.printf(
                    "[it] through the switch vs stock MLlib: coefficients differ by %.3e (relative L2), "
                            + "objective %.12f vs %.12f, %d vs %d iterations%n",
                    rel, fSwitch, fStock, viaSwitch.iterations, stock.iterations);
            // The drop-in's parity criteria (MllibParity): coefficients within 1e-3, objective within 1e-6 or lower.
            assertTrue(rel <= 1e-3, "coefficients differ by " + rel);
            assertTrue(fSwitch <= fStock * (1 + 1e-6), fSwitch + " vs stock " + fStock);
        }

        // model.transform(df).select("label", "prediction"): the model's own predictions.
        final List<List<Object>> predicted = client.collect(client.select(
                client.transform(model, params, client.read("libsvm", data.toString())), "label", "prediction"));
        assertEquals(rows.size(), predicted.size());
        final long right =
                predicted.stream().filter(r -> r.get(0).equals(r.get(1))).count();
        final long rightLocally = rows.stream()
                .filter(r -> (margin(viaSwitch.coefficients, viaSwitch.intercept, r) > 0 ? 1.0 : 0.0) == r[0])
                .count();
        System.out.println("[it] transform: " + right + " of " + predicted.size() + " right, " + rightLocally
                + " from the fetched coefficients");
        assertEquals(rightLocally, right);
        assertTrue(right > 0.6 * rows.size(), "the model predicts no better than chance: " + right);

        // model.write().overwrite().save(dir); LogisticRegressionModel.load(dir): a stock model, the same numbers.
        final Path saved = work.resolve("model");
        client.save(model, params, saved.toString(), true);
        assertEquals(ConnectMl.LOGISTIC_REGRESSION_MODEL, savedClass(saved));
        final ConnectMl.Loaded loaded = client.load(ConnectMl.LOGISTIC_REGRESSION_MODEL, saved.toString());
        assertEquals(uid, loaded.uid());
        assertArrayEquals(viaSwitch.coefficients, ConnectMl.asDoubles(client.fetch(loaded.ref(), "coefficients")));
        assertEquals(viaSwitch.intercept, ConnectMl.asDouble(client.fetch(loaded.ref(), "intercept")));

        // LogisticRegression.load(dir) of an estimator a stock session saved: through the plugin, as the drop-in.
        final Path estimator = work.resolve("estimator");
        final String savedUid = uid();
        try (ConnectMl stockSession = client.newSession()) {
            stockSession.unsetConf(BACKEND_KEY);
            stockSession.saveEstimator(
                    ConnectMl.LOGISTIC_REGRESSION, savedUid, params(7, 0.5), estimator.toString(), true);
        }
        assertEquals(ConnectMl.LOGISTIC_REGRESSION, savedClass(estimator));
        final ConnectMl.Loaded lr = client.loadEstimator(ConnectMl.LOGISTIC_REGRESSION, estimator.toString());
        assertEquals(savedUid, lr.uid());
        assertEquals(7, ConnectMl.asInt(lr.params().get("maxIter")), lr.params().toString());
        assertEquals(
                0.5,
                ConnectMl.asDouble(lr.params().get("regParam")),
                lr.params().toString());
    }

    /**
     * Stock LinearSVC and LinearRegression (l-bfgs) fits train as their drop-ins through the switch, with the
     * coefficients of the same request in a session without the plugin.
     */
    @Test
    void stockLinearSvcAndLinearRegressionTrainThroughTheSwitch() {
        for (final String estimator : List.of(
                "org.apache.spark.ml.classification.LinearSVC", "org.apache.spark.ml.regression.LinearRegression")) {
            final Map<String, Object> params = params(50, 0.01);
            if (estimator.endsWith("LinearRegression")) {
                params.put("solver", "l-bfgs");
            }
            final String uid = uid();
            final long before = operator.totals().jobs().packetsIn();
            final String model = client.fit(estimator, uid, params, client.read("libsvm", data.toString()));
            final String report = fitReport(uid);
            System.out.println("[it] " + estimator + ": " + report);
            assertTrue(report.contains("viaSwitch=true") && report.contains("fallbacks=0"), report);
            assertTrue(operator.totals().jobs().packetsIn() > before, estimator + ": the switch counted no packet");
            final double[] viaSwitch = withIntercept(client, model);
            try (ConnectMl stockSession = client.newSession()) {
                stockSession.unsetConf(BACKEND_KEY);
                final String stockUid = uid();
                final long stockBefore = operator.totals().jobs().packetsIn();
                final String stockModel =
                        stockSession.fit(estimator, stockUid, params, stockSession.read("libsvm", data.toString()));
                assertEquals(
                        stockBefore, operator.totals().jobs().packetsIn(), "the stock fit went through the switch");
                assertFalse(server.output().contains(stockUid + ": FitReport"), "the drop-in trained the stock fit");
                final double rel = relativeL2(viaSwitch, withIntercept(stockSession, stockModel));
                System.out.printf(
                        "[it] %s through the switch vs stock MLlib: coefficients differ by %.3e%n", estimator, rel);
                assertTrue(rel <= 1e-3, estimator + ": coefficients differ by " + rel);
            }
        }
    }

    private static double[] withIntercept(final ConnectMl c, final String model) {
        final double[] w = ConnectMl.asDoubles(c.fetch(model, "coefficients"));
        final double[] all = Arrays.copyOf(w, w.length + 1);
        all[w.length] = ConnectMl.asDouble(c.fetch(model, "intercept"));
        return all;
    }

    @Test
    void aFitItsClientInterruptsEndsItsBarrierStageAndLeavesNoJobOnTheSwitch() throws Exception {
        try (ConnectMl session = client.newSession()) {
            final String uid = uid();
            final String op = UUID.randomUUID().toString();
            final int logAt = server.output().length();
            final CompletableFuture<Object> fit = startLongFit(session, uid, op);
            final String loop = awaitLoopStage(logAt);
            final long t0 = System.nanoTime();
            assertEquals(List.of(op), session.interruptAll());
            final ExecutionException failed =
                    assertThrows(ExecutionException.class, () -> fit.get(RESULT_TIMEOUT_MS, TimeUnit.MILLISECONDS));
            final long answeredMs = msSince(t0);
            System.out.println("[it] interrupted fit answered after " + answeredMs + " ms: "
                    + failed.getCause().getMessage().lines().findFirst().orElse(""));
            assertTrue(
                    failed.getCause().getMessage().contains("CANCEL"),
                    failed.getCause().getMessage());
            assertCancelledCleanly(uid, loop, logAt, t0, RESULT_TIMEOUT_MS);
            fitAgainThroughTheSwitch(session);
        }
    }

    @Test
    void aFitWhoseClientIsGoneEndsAfterTheDetachTimeoutAndLeavesNoJobOnTheSwitch() throws Exception {
        try (ConnectMl session = client.newSession()) {
            final String uid = uid();
            final String op = UUID.randomUUID().toString();
            final int logAt = server.output().length();
            final ConnectMl.Started started = session.start(
                    Plan.newBuilder().setCommand(longFit(session, uid)).build(), op);
            final CompletableFuture<Object> fit = CompletableFuture.supplyAsync(started::await);
            final String loop = awaitLoopStage(logAt);
            final long t0 = System.nanoTime();
            started.abandon(); // the client's connection drops, as when its process dies
            assertThrows(ExecutionException.class, () -> fit.get(CALL_MS, TimeUnit.MILLISECONDS));
            final long bound = STREAM_MS + DETACHED_TIMEOUT_MS + MAINTENANCE_MS + RESULT_TIMEOUT_MS;
            assertCancelledCleanly(uid, loop, logAt, t0, bound);
            // The server kept the detached execution until its timeout, and it is the timeout that ended the fit:
            // the execution expired before the loop's stage ended.
            final String log = server.output().substring(logAt);
            final Matcher expired = Pattern.compile(Pattern.quote(op) + "\\S* that was abandoned and expired")
                    .matcher(log);
            final Matcher ended =
                    Pattern.compile("Removed TaskSet " + loop + "\\.").matcher(log);
            assertTrue(
                    expired.find() && ended.find() && expired.start() < ended.start(),
                    "the abandoned execution did not expire before its loop stage ended");
            assertTrue(msSince(t0) >= DETACHED_TIMEOUT_MS, "ended before the detach timeout: " + msSince(t0) + " ms");
            fitAgainThroughTheSwitch(session);
        }
    }

    @Test
    void twoSessionsFitAtOnce() throws Exception {
        final Map<String, Object> params = params(60, 0.02);
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicInteger mostJobs = new AtomicInteger();
        final CompletableFuture<Void> watcher = CompletableFuture.runAsync(() -> {
            while (running.get()) {
                mostJobs.accumulateAndGet(operator.describe().jobs(), Math::max);
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // bounded polling of the switch's state
            }
        });
        try (ConnectMl a = client.newSession();
                ConnectMl b = client.newSession()) {
            final String uidA = uid();
            final String uidB = uid();
            final long[] spans = new long[4];
            final CompletableFuture<String> fa = CompletableFuture.supplyAsync(() -> timed(
                    spans,
                    0,
                    () -> a.fit(ConnectMl.LOGISTIC_REGRESSION, uidA, params, a.read("libsvm", data.toString()))));
            final CompletableFuture<String> fb = CompletableFuture.supplyAsync(() -> timed(
                    spans,
                    2,
                    () -> b.fit(ConnectMl.LOGISTIC_REGRESSION, uidB, params, b.read("libsvm", data.toString()))));
            final String ma = fa.get(CALL_MS, TimeUnit.MILLISECONDS);
            final String mb = fb.get(CALL_MS, TimeUnit.MILLISECONDS);
            running.set(false);
            watcher.get(10, TimeUnit.SECONDS);
            assertTrue(spans[0] < spans[3] && spans[2] < spans[1], "the two fits did not overlap in time");
            final String ra = fitReport(uidA);
            final String rb = fitReport(uidB);
            System.out.println("[it] session A: " + ra + "\n[it] session B: " + rb + "\n[it] at most " + mostJobs.get()
                    + " jobs on the switch at once");
            for (final String r : List.of(ra, rb)) {
                assertTrue(
                        r.contains("viaSwitch=true")
                                && r.contains("fallbacks=0")
                                && Long.parseLong(field(r, "packetsIn")) > 0,
                        r);
            }
            final Fitted x = fetch(a, ma);
            final Fitted y = fetch(b, mb);
            assertTrue(
                    relativeL2(x.withIntercept(), y.withIntercept()) <= 1e-9,
                    "the two sessions' models differ: " + Arrays.toString(x.withIntercept()) + " vs "
                            + Arrays.toString(y.withIntercept()));
        } finally {
            running.set(false);
        }
        awaitOccupancy(o -> o.jobs() == 0, "no job left on the switch", RESULT_TIMEOUT_MS);
    }

    // ---------------------------------------------------------------------------------------------- helpers

    private static Map<String, Object> params(final int maxIter, final double regParam) {
        final Map<String, Object> p = new LinkedHashMap<>();
        p.put("maxIter", maxIter);
        p.put("regParam", regParam);
        return p;
    }

    /** A Python-style uid (class name, underscore, 12 hex digits). */
    private static String uid() {
        return "LogisticRegression_"
                + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    }

    /** A fit whose loop runs for seconds (see writeRandomLabels), with every stop criterion of MLlib at its loosest. */
    private static Command longFit(final ConnectMl session, final String uid) {
        final Map<String, Object> p = new LinkedHashMap<>();
        p.put("maxIter", 1_000_000);
        p.put("regParam", 0.0);
        p.put("tol", 0.0);
        final Relation d = session.read("libsvm", separable.toString());
        return ConnectMl.fitCommand(ConnectMl.LOGISTIC_REGRESSION, uid, p, d);
    }

    private static CompletableFuture<Object> startLongFit(final ConnectMl session, final String uid, final String op) {
        final ConnectMl.Started s = session.start(
                Plan.newBuilder().setCommand(longFit(session, uid)).build(), op);
        return CompletableFuture.supplyAsync(s::await);
    }

    /** The fit's optimizer loop: its second barrier stage after {@code from} (the first one sums the statistics). */
    private static String awaitLoopStage(final int from) throws InterruptedException {
        final Pattern barrier = Pattern.compile("Successfully scheduled all the \\d+ tasks for barrier stage (\\d+)");
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_MS);
        while (true) {
            final Matcher m = barrier.matcher(server.output().substring(from));
            if (m.find() && m.find()) {
                return m.group(1);
            }
            if (System.nanoTime() > end) {
                throw new AssertionError(
                        "the long fit started no loop stage within " + START_MS + " ms:\n" + server.tail(40));
            }
            TimeUnit.MILLISECONDS.sleep(20); // polls a file the server writes; the bound is the deadline above
        }
    }

    /**
     * After a cancel at {@code t0} of a fit in its loop stage {@code stage}: the switch holds no job and the stage's
     * tasks have all ended within {@code boundMs}; the fit never reported an end.
     */
    private static void assertCancelledCleanly(
            final String uid, final String stage, final int logAt, final long t0, final long boundMs)
            throws InterruptedException {
        awaitOccupancy(o -> o.jobs() == 0, "the cancelled fit's job to leave the switch", boundMs);
        final long releasedMs = msSince(t0);
        awaitLog(
                logAt,
                "Removed TaskSet " + stage + "\\.\\d+,? whose tasks have all completed",
                Math.max(1, boundMs - msSince(t0)));
        final long endedMs = msSince(t0);
        System.out.println("[it] cancelled in its loop (stage " + stage + "): switch job gone after " + releasedMs
                + " ms, every task of the stage ended after " + endedMs + " ms (bound " + boundMs + " ms)");
        assertTrue(endedMs <= boundMs, endedMs + " ms");
        assertFalse(
                server.output().substring(logAt).contains(uid + ": FitReport"), "the cancelled fit finished: " + uid);
    }

    /** Waits (bounded) for a line matching {@code regex} in the server's log after its first {@code from} chars. */
    private static Matcher awaitLog(final int from, final String regex, final long limitMs)
            throws InterruptedException {
        final Pattern p = Pattern.compile(regex);
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        while (true) {
            final Matcher m = p.matcher(server.output().substring(from));
            if (m.find()) {
                return m;
            }
            if (System.nanoTime() > end) {
                throw new AssertionError(
                        "the server logged no /" + regex + "/ within " + limitMs + " ms:\n" + server.tail(40));
            }
            TimeUnit.MILLISECONDS.sleep(50); // polls a file the server writes; the bound is the deadline above
        }
    }

    /** The session still trains through the switch: the cancelled stage gave its slots back. */
    private static void fitAgainThroughTheSwitch(final ConnectMl session) {
        final String uid = uid();
        session.fit(ConnectMl.LOGISTIC_REGRESSION, uid, params(20, 0.05), session.read("libsvm", data.toString()));
        final String r = fitReport(uid);
        assertTrue(r.contains("viaSwitch=true"), r);
    }

    private static <T> T timed(final long[] spans, final int at, final java.util.function.Supplier<T> call) {
        spans[at] = System.nanoTime();
        try {
            return call.get();
        } finally {
            spans[at + 1] = System.nanoTime();
        }
    }

    /** What a client fetches of a model: coefficients, intercept, and its training summary. */
    private record Fitted(double[] coefficients, double intercept, double[] history, int iterations) {
        double[] withIntercept() {
            final double[] all = Arrays.copyOf(coefficients, coefficients.length + 1);
            all[coefficients.length] = intercept;
            return all;
        }
    }

    private static Fitted fetch(final ConnectMl c, final String model) {
        return new Fitted(
                ConnectMl.asDoubles(c.fetch(model, "coefficients")),
                ConnectMl.asDouble(c.fetch(model, "intercept")),
                ConnectMl.asDoubles(c.fetch(model + ".summary", "objectiveHistory")),
                ConnectMl.asInt(c.fetch(model + ".summary", "totalIterations")));
    }

    /** The drop-in's report of the fit {@code uid}, from the server's log (written before the fit answers). */
    private static String fitReport(final String uid) {
        final Matcher m =
                Pattern.compile(Pattern.quote(uid) + ": (FitReport\\[.*)").matcher(server.output());
        assertTrue(m.find(), "no report of " + uid + " in the server's log:\n" + server.tail(30));
        return m.group(1);
    }

    private static String field(final String report, final String name) {
        final Matcher m = Pattern.compile(name + "=(-?\\d+)").matcher(report);
        assertTrue(m.find(), name + " in " + report);
        return m.group(1);
    }

    /** The driver's counter {@code name} of spark-switchml's plugin, as Spark's CSV sink last wrote it (0: none yet). */
    private static long driverCounter(final String name) throws IOException {
        final String suffix = ".driver.plugin.org.switchml.spark.SwitchMLPlugin." + name + ".csv";
        try (Stream<Path> files = Files.list(metrics)) {
            final List<Path> csv = files.filter(p -> p.getFileName().toString().endsWith(suffix))
                    .toList();
            if (csv.isEmpty()) {
                return 0;
            }
            final List<String> lines = Files.readAllLines(csv.get(0));
            final String last = lines.get(lines.size() - 1);
            return last.startsWith("t") ? 0 : Long.parseLong(last.split(",")[1].trim());
        }
    }

    private static long awaitDriverCounter(final String name, final Predicate<Long> done) throws IOException {
        final long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long v = driverCounter(name);
        while (!done.test(v)) {
            assertTrue(System.nanoTime() < end, "the driver's " + name + " stayed at " + v + " for 30 s");
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200)); // the sink writes once a second
            v = driverCounter(name);
        }
        return v;
    }

    private static void awaitOccupancy(final Predicate<Occupancy> done, final String what, final long limitMs) {
        final long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(limitMs);
        Occupancy o = operator.describe();
        while (!done.test(o)) {
            if (System.nanoTime() > end) {
                throw new AssertionError("no " + what + " within " + limitMs + " ms: " + o);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // bounded polling of the switch's own state
            o = operator.describe();
        }
    }

    private static long msSince(final long t0) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
    }

    private static double margin(final double[] w, final double b, final double[] row) {
        double m = b;
        for (int j = 0; j < w.length; j++) {
            m += w[j] * row[j + 1];
        }
        return m;
    }

    private static double relativeL2(final double[] a, final double[] b) {
        double d = 0;
        double n = 0;
        for (int i = 0; i < a.length; i++) {
            d += (a[i] - b[i]) * (a[i] - b[i]);
            n += b[i] * b[i];
        }
        return Math.sqrt(d) / Math.max(Math.sqrt(n), 1e-300);
    }

    /** The class a saved model's metadata names. */
    private static String savedClass(final Path dir) throws IOException {
        try (Stream<Path> parts = Files.list(dir.resolve("metadata"))) {
            for (final Path p : parts.filter(f -> f.getFileName().toString().startsWith("part-"))
                    .toList()) {
                final Matcher m = Pattern.compile("\"class\":\"([^\"]+)\"").matcher(Files.readString(p));
                if (m.find()) {
                    return m.group(1);
                }
            }
        }
        throw new AssertionError(dir + "/metadata names no class");
    }

    /**
     * Logistic data (labels drawn from known weights) of about {@code bytes} bytes of LIBSVM; returns the rows as
     * {@code [label, x1..xd]}.
     */
    private static List<double[]> writeLogistic(
            final Path file, final SplittableRandom r, final long bytes, final int d) throws IOException {
        final double[] truth = new double[d];
        for (int j = 0; j < d; j++) {
            truth[j] = r.nextDouble(-1.5, 1.5);
        }
        final List<double[]> out = new ArrayList<>();
        long written = 0;
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            while (written < bytes) {
                final double[] row = new double[d + 1];
                double m = -0.2;
                for (int j = 0; j < d; j++) {
                    row[j + 1] = r.nextDouble(-1, 1) * (1 + j % 4);
                    m += truth[j] * row[j + 1];
                }
                row[0] = r.nextDouble() < 1 / (1 + Math.exp(-m)) ? 1 : 0;
                final String line = libsvm(row);
                w.write(line);
                written += line.length();
                out.add(row);
            }
        }
        return out;
    }

    /**
     * Labels drawn independently of sparse +-1 features, fewer rows than twice the features: almost surely
     * separable, so without regularization the optimizer runs until the loss underflows (some 40 iterations, as
     * stock MLlib's), each with an allreduce of {@code d} doubles: a loop of seconds.
     */
    private static void writeRandomLabels(
            final Path file, final SplittableRandom r, final int n, final int d, final int nonZeros)
            throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file)) {
            for (int i = 0; i < n; i++) {
                final StringBuilder sb = new StringBuilder(r.nextBoolean() ? "1" : "0");
                final int[] idx = r.ints(nonZeros, 1, d + 1).sorted().distinct().toArray();
                for (final int j : idx) {
                    sb.append(' ').append(j).append(r.nextBoolean() ? ":1" : ":-1");
                }
                w.write(sb.append('\n').toString());
            }
        }
    }

    private static String libsvm(final double[] row) {
        final StringBuilder sb = new StringBuilder(row[0] > 0 ? "1" : "0");
        for (int j = 1; j < row.length; j++) {
            sb.append(' ').append(j).append(':').append(row[j]);
        }
        return sb.append('\n').toString();
    }

    private static Path existing(final String property) {
        final String v = System.getProperty(property);
        assertTrue(
                v != null && Files.exists(Path.of(v)),
                property + " = " + v + " does not exist: run 'mvn verify' "
                        + "from the repository root, which builds spark-dist and the shaded spark-switchml jar first");
        return Path.of(v);
    }

    private static Path privateFile(final Path file, final String text) throws IOException {
        Files.deleteIfExists(file);
        Files.writeString(file, text);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        return file;
    }

    private static void deleteTree(final Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (final Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
