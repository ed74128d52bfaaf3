package org.switchml.spark.connect;

import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.classification.LinearSVC;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.regression.LinearRegression;
import org.apache.spark.sql.connect.plugin.MLBackendPlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.switchml.spark.ml.classification.SwitchMLLinearSVC;
import org.switchml.spark.ml.classification.SwitchMLLogisticRegression;
import org.switchml.spark.ml.regression.SwitchMLLinearRegression;

/**
 * The Spark Connect server's ML backend plugin of spark-switchml: a stock MLlib estimator that a Connect client
 * fits (for PySpark, {@code pyspark.ml.classification.LogisticRegression}, whose server class is
 * {@code org.apache.spark.ml.classification.LogisticRegression}) is created as its drop-in instead (here
 * {@link SwitchMLLogisticRegression}; likewise {@code LinearSVC} as {@link SwitchMLLinearSVC} and
 * {@code LinearRegression} as {@link SwitchMLLinearRegression}), with the client's uid and params. The drop-in returns MLlib's own model
 * class, so what the client does with the model (attributes, summary, transform, save, load) is MLlib's.
 *
 * <p>Enable it on the server, with the library's jar on its classpath:
 * {@code --conf spark.connect.ml.backend.classes=org.switchml.spark.connect.SwitchMLBackend}. A session may set
 * or unset that key for itself (it is a session conf of Spark's). Settings that a client's estimator cannot
 * carry (the switch's address, precision, fallback) are the server's {@code spark.switchml.*} configuration, read
 * by the drop-in as in any application.
 *
 * <p>Spark instantiates this class for every lookup (public no-arg constructor) and then looks the drop-in up
 * among the {@link Estimator} providers that {@link ServiceLoader} finds; the library's jar lists every drop-in
 * of {@link #dropIns()} in {@code META-INF/services/org.apache.spark.ml.Estimator}. Should a repackaged jar lose
 * that entry, the plugin leaves the name as it is (the stock estimator trains, with one warning) rather than let
 * the fit fail with Spark's "Unsupported ML operator".
 */
public final class SwitchMLBackend implements MLBackendPlugin {
    private static final Logger LOG = LoggerFactory.getLogger(SwitchMLBackend.class);

    /** Stock estimator class name to the drop-in that trains in its place: one entry per drop-in. */
    private static final Map<String, String> DROP_INS = Map.ofEntries(
            dropIn(LogisticRegression.class, SwitchMLLogisticRegression.class),
            dropIn(LinearSVC.class, SwitchMLLinearSVC.class),
            dropIn(LinearRegression.class, SwitchMLLinearRegression.class));

    /** Names already announced (once per JVM and name, at INFO) or warned about. */
    private static final Set<String> SAID = ConcurrentHashMap.newKeySet();

    /** Spark creates the plugin by this constructor, once per lookup. */
    public SwitchMLBackend() {}

    /** A table entry; the types make sure that a drop-in extends the estimator it replaces. */
    private static <E extends Estimator<?>> Map.Entry<String, String> dropIn(
            final Class<E> stock, final Class<? extends E> replacement) {
        return Map.entry(stock.getName(), replacement.getName());
    }

    /** The estimators this plugin replaces: stock class name to drop-in class name. */
    public static Map<String, String> dropIns() {
        return DROP_INS;
    }

    /**
     * The drop-in for {@code mlName} (the server class name the client asked for), or empty when there is none:
     * models, transformers, evaluators and every other estimator stay Spark's.
     */
    @Override
    public Optional<String> transform(final String mlName) {
        final String replacement = DROP_INS.get(mlName);
        if (replacement == null) {
            return Optional.empty();
        }
        if (!registered(replacement)) {
            if (SAID.add("missing " + replacement)) {
                LOG.warn(
                        "spark-switchml: {} is not listed in META-INF/services/{} on the server's classpath, so "
                                + "Spark Connect could not create it; {} trains with stock MLlib",
                        replacement,
                        Estimator.class.getName(),
                        mlName);
            }
            return Optional.empty();
        }
        if (SAID.add(mlName)) {
            LOG.info("spark-switchml: Spark Connect fits of {} train with {}", mlName, replacement);
        }
        return Optional.of(replacement);
    }

    /** Whether {@link ServiceLoader} finds {@code className} among the estimators, as Spark will look for it. */
    @SuppressWarnings("rawtypes")
    private static boolean registered(final String className) {
        final ClassLoader context = Thread.currentThread().getContextClassLoader();
        final ClassLoader loader = context != null ? context : SwitchMLBackend.class.getClassLoader();
        try {
            // stream(): the providers' types, none instantiated (Spark looks them up the same way)
            return ServiceLoader.load(Estimator.class, loader).stream()
                    .anyMatch(p -> p.type().getName().equals(className));
        } catch (final ServiceConfigurationError e) {
            // Another jar's broken entry: Spark's own scan fails on it too, with its own message.
            LOG.debug("spark-switchml: the scan of {} providers failed: {}", Estimator.class.getName(), e.toString());
            return true;
        }
    }
}
