package org.switchml.spark.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.Params;
import org.apache.spark.sql.connect.plugin.MLBackendPlugin;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the Spark Connect server needs of the plugin and of each drop-in it names, checked as the server does it:
 * the plugin by its no-arg constructor; the drop-in found by {@link ServiceLoader} among the {@link Estimator}
 * providers, created by its {@code (String uid)} constructor with every param of the stock estimator settable by
 * name, and loadable by a static {@code load(String)}; the stock name a client sends is itself a stock provider.
 * The Connect path end to end (a server, a client's messages) is in the integration tests.
 */
@Timeout(60)
class SwitchMLBackendTest {
    private static final String SERVICES = "META-INF/services/" + Estimator.class.getName();

    private static MLBackendPlugin plugin() throws ReflectiveOperationException {
        // As Spark creates it: by name, through the public no-arg constructor.
        return (MLBackendPlugin)
                Class.forName(SwitchMLBackend.class.getName()).getConstructor().newInstance();
    }

    @Test
    void aStockLogisticRegressionBecomesTheDropInAndNothingElseChanges() throws Exception {
        final MLBackendPlugin p = plugin();
        assertEquals(
                Optional.of("org.switchml.spark.ml.classification.SwitchMLLogisticRegression"),
                p.transform("org.apache.spark.ml.classification.LogisticRegression"));
        assertEquals(
                Optional.of("org.switchml.spark.ml.classification.SwitchMLLinearSVC"),
                p.transform("org.apache.spark.ml.classification.LinearSVC"));
        assertEquals(
                Optional.of("org.switchml.spark.ml.regression.SwitchMLLinearRegression"),
                p.transform("org.apache.spark.ml.regression.LinearRegression"));
        // Models (a load names the model class), other estimators, evaluators: Spark's own.
        for (final String other : List.of(
                "org.apache.spark.ml.classification.LogisticRegressionModel",
                "org.apache.spark.ml.classification.RandomForestClassifier",
                "org.apache.spark.ml.evaluation.BinaryClassificationEvaluator",
                "org.switchml.spark.ml.classification.SwitchMLLogisticRegression",
                "")) {
            assertEquals(Optional.empty(), p.transform(other), other);
        }
    }

    @SuppressWarnings("rawtypes")
    private static Set<String> estimatorProviders(final ClassLoader loader) {
        return ServiceLoader.load(Estimator.class, loader).stream()
                .map(q -> q.type().getName())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void everyDropInIsWhatTheConnectServerLooksFor() throws Exception {
        final Map<String, String> dropIns = SwitchMLBackend.dropIns();
        assertFalse(dropIns.isEmpty());
        final Set<String> providers = estimatorProviders(getClass().getClassLoader());
        assertTrue(providers.size() > 20, "MLlib's own estimators were not found: " + providers);
        for (final Map.Entry<String, String> e : dropIns.entrySet()) {
            final String stock = e.getKey();
            final String dropIn = e.getValue();
            assertTrue(providers.contains(stock), stock + " is not a stock Estimator provider, so no client sends it");
            assertTrue(providers.contains(dropIn), dropIn + " is not listed in " + SERVICES);
            final Class<?> s = Class.forName(stock);
            final Class<?> d = Class.forName(dropIn);
            assertTrue(s.isAssignableFrom(d), dropIn + " does not extend " + stock);
            assertTrue(Modifier.isPublic(d.getModifiers()) && !Modifier.isAbstract(d.getModifiers()), dropIn);
            assertNotNull(d.getConstructor(), "ServiceLoader needs a public no-arg constructor");
            final Params created = (Params) d.getConstructor(String.class).newInstance("fromClient_0123");
            assertEquals("fromClient_0123", created.uid(), "the client's uid is the estimator's");
            // Every stock param can be set by its name, as the server applies the client's params.
            final Params plain = (Params) s.getConstructor(String.class).newInstance("stock");
            for (final Param<?> param : plain.params()) {
                assertEquals(param.name(), created.getParam(param.name()).name());
            }
            final Method load = d.getMethod("load", String.class);
            assertTrue(
                    Modifier.isStatic(load.getModifiers()) && s.isAssignableFrom(load.getReturnType()),
                    dropIn + ".load(String) is what a Connect read of " + stock + " calls");
        }
    }

    @Test
    void theServicesFileListsOnlyDropIns() throws IOException {
        final List<String> listed = new ArrayList<>();
        final List<URL> ours = new ArrayList<>();
        for (final URL u : Collections.list(getClass().getClassLoader().getResources(SERVICES))) {
            if (!u.toString().contains("spark-mllib")) {
                ours.add(u);
                try (InputStream in = u.openStream()) {
                    Arrays.stream(new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n"))
                            .map(String::strip)
                            .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                            .forEach(listed::add);
                }
            }
        }
        assertEquals(1, ours.size(), "our " + SERVICES + ": " + ours);
        assertEquals(new TreeSet<>(SwitchMLBackend.dropIns().values()), new TreeSet<>(listed));
        assertEquals(listed.size(), new TreeSet<>(listed).size(), "listed twice: " + listed);
    }

    @Test
    void aDropInThatServiceLoaderCannotFindLeavesTheStockEstimator() throws Exception {
        final MLBackendPlugin p = plugin();
        final String stock = "org.apache.spark.ml.classification.LogisticRegression";
        final Thread t = Thread.currentThread();
        final ClassLoader before = t.getContextClassLoader();
        // A loader that sees no services file at all: the server's view of a jar that lost the entry.
        try (URLClassLoader blind = new URLClassLoader(new URL[0], ClassLoader.getPlatformClassLoader())) {
            assertTrue(estimatorProviders(blind).isEmpty());
            t.setContextClassLoader(blind);
            assertEquals(Optional.empty(), p.transform(stock));
        } finally {
            t.setContextClassLoader(before);
        }
        assertTrue(p.transform(stock).isPresent(), "the positive control: with the entry, the drop-in");
    }
}
