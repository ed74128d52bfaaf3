package org.switchml.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The jar users put on {@code --jars}: every class in it lives under {@code org.switchml}, so nothing in it can
 * meet a class of Spark or of the application, and relocation kept the wire names a P4Runtime server expects;
 * {@code java -jar} on it works; its license and notice are ours, with those of what it bundles.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class ShadedJarIT {

    private static Path libraryJar() {
        final String v = System.getProperty("switchml.it.libraryJar");
        assertTrue(v != null && Files.exists(Path.of(v)), "switchml.it.libraryJar = " + v + " does not exist");
        return Path.of(v);
    }

    @Test
    void everyClassIsOurs() throws Exception {
        final List<String> foreign = new ArrayList<>();
        int classes = 0;
        try (JarFile jar = new JarFile(libraryJar().toFile())) {
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                final String name = e.nextElement().getName();
                if (!name.endsWith(".class") || name.startsWith("META-INF/")) {
                    continue;
                }
                classes++;
                if (!name.startsWith("org/switchml/")) {
                    foreign.add(name);
                }
            }
        }
        assertTrue(classes > 1000, "the shaded jar holds only " + classes + " classes");
        assertTrue(
                foreign.isEmpty(),
                "classes outside org.switchml in the shaded jar: " + foreign.subList(0, Math.min(20, foreign.size())));
    }

    /** {@code java -jar} on the jar says what it is, with the pom's version, and refuses an unknown argument. */
    @Test
    void javaDashJarSaysWhatTheJarIs() throws Exception {
        final String version = System.getProperty("switchml.it.version");
        assertTrue(version != null && !version.isEmpty(), "switchml.it.version is not set");
        final Run run = javaJar();
        assertEquals(0, run.code(), run.err());
        final List<String> lines = run.out().lines().toList();
        assertTrue(
                lines.get(0)
                        .startsWith("spark-switchml " + version + ": SwitchML in-network aggregation for Apache "
                                + "Spark 4.0."),
                lines.get(0));
        assertTrue(
                run.out()
                        .contains("spark-submit --jars " + libraryJar().getFileName()
                                + " --conf spark.plugins=org.switchml.spark.SwitchMLPlugin"),
                run.out());
        assertEquals(List.of(version), javaJar("--version").out().lines().toList());
        final Run bad = javaJar("--bogus");
        assertEquals(2, bad.code());
        assertEquals(1, bad.err().lines().count(), bad.err());
        try (JarFile jar = new JarFile(libraryJar().toFile())) {
            assertEquals(
                    "org.switchml.Version",
                    jar.getManifest().getMainAttributes().getValue("Main-Class"));
            assertEquals(version, jar.getManifest().getMainAttributes().getValue("Implementation-Version"));
        }
    }

    /**
     * One license and one notice: META-INF/LICENSE is the repository's Apache-2.0 LICENSE (no bundled library's
     * LICENSE in its place), META-INF/NOTICE leads with the repository's NOTICE and keeps the bundled libraries'
     * notices (Netty's), and META-INF/LICENSE-THIRD-PARTY.txt names every library whose classes the jar holds.
     */
    @Test
    void theLicenseAndTheNoticeAreOursWithTheBundledOnesMerged() throws Exception {
        final Path root = Path.of(System.getProperty("switchml.it.root"));
        try (JarFile jar = new JarFile(libraryJar().toFile())) {
            assertEquals(Files.readString(root.resolve("LICENSE")), text(jar, "META-INF/LICENSE"));
            for (final String other :
                    new String[] {"META-INF/LICENSE.txt", "META-INF/LICENSE.md", "META-INF/NOTICE.txt"}) {
                assertTrue(jar.getJarEntry(other) == null, other + " is in the jar");
            }
            final String notice = text(jar, "META-INF/NOTICE");
            final String ours = Files.readString(root.resolve("NOTICE"));
            final String firstParagraph = ours.substring(0, ours.indexOf("\n\n") + 1);
            assertTrue(notice.strip().startsWith(firstParagraph.strip()), notice);
            assertTrue(
                    notice.contains(ours.substring(ours.indexOf("This product is licensed"))
                            .strip()),
                    notice);
            assertTrue(notice.contains("The Netty Project"), "Netty's notice is missing: " + notice);

            final String thirdParty = text(jar, "META-INF/LICENSE-THIRD-PARTY.txt");
            final Map<String, String> listedAs = new TreeMap<>(Map.ofEntries(
                    Map.entry("android", "com.google.android:annotations"),
                    Map.entry("com/google/api", "proto-google-common-protos"),
                    Map.entry("com/google/apps", "proto-google-common-protos"),
                    Map.entry("com/google/cloud", "proto-google-common-protos"),
                    Map.entry("com/google/geo", "proto-google-common-protos"),
                    Map.entry("com/google/logging", "proto-google-common-protos"),
                    Map.entry("com/google/longrunning", "proto-google-common-protos"),
                    Map.entry("com/google/rpc", "proto-google-common-protos"),
                    Map.entry("com/google/shopping", "proto-google-common-protos"),
                    Map.entry("com/google/type", "proto-google-common-protos"),
                    Map.entry("com/google/common", "com.google.guava:guava"),
                    Map.entry("com/google/thirdparty", "com.google.guava:guava"),
                    Map.entry("com/google/errorprone", "error_prone_annotations"),
                    Map.entry("com/google/gson", "gson"),
                    Map.entry("com/google/j2objc", "j2objc-annotations"),
                    Map.entry("com/google/protobuf", "protobuf-java"),
                    Map.entry("io/grpc", "io.grpc:grpc-api"),
                    Map.entry("io/perfmark", "perfmark-api"),
                    Map.entry("javax/annotation", "jsr305"),
                    Map.entry("org/checkerframework", "checker-qual"),
                    Map.entry("org/codehaus", "animal-sniffer-annotations"),
                    Map.entry("p4", "onos-protocols-p4runtime-proto"),
                    Map.entry("picocli", "info.picocli:picocli")));
            final Set<String> roots = new TreeSet<>();
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                final String name = e.nextElement().getName();
                if (name.startsWith(SHADED) && name.endsWith(".class")) {
                    final String[] part = name.substring(SHADED.length()).split("/");
                    roots.add(
                            part[0].equals("com")
                                    ? part[0] + "/" + part[1] + "/" + part[2]
                                    : Set.of("io", "org", "javax").contains(part[0])
                                            ? part[0] + "/" + part[1]
                                            : part[0]);
                }
            }
            assertTrue(roots.size() >= 10, "relocated packages: " + roots);
            final List<String> unlisted = new ArrayList<>();
            for (final String r : roots) {
                final String library = listedAs.get(r);
                if (library == null || !thirdParty.contains(library)) {
                    unlisted.add(r + (library == null ? "" : " (" + library + ")"));
                }
            }
            assertTrue(
                    unlisted.isEmpty(),
                    "relocated packages whose library META-INF/LICENSE-THIRD-PARTY.txt does not " + "name: "
                            + unlisted);
        }
    }

    private static final String SHADED = "org/switchml/shaded/";

    private static String text(final JarFile jar, final String entry) throws IOException {
        final JarEntry e = jar.getJarEntry(entry);
        assertTrue(e != null, entry + " is not in the jar");
        try (InputStream in = jar.getInputStream(e)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private record Run(int code, String out, String err) {}

    /** {@code java -jar} on the library jar with {@code args}, with this JVM's java, bounded. */
    private static Run javaJar(final String... args) throws Exception {
        final List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                libraryJar().toString()));
        cmd.addAll(List.of(args));
        final Process p = new ProcessBuilder(cmd).start();
        final CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(p.getErrorStream()));
        final String out = read(p.getInputStream());
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "java -jar did not end in 60 s");
        return new Run(p.exitValue(), out, err.get(10, TimeUnit.SECONDS));
    }

    private static String read(final InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * What a Spark Connect server needs of the jar: the ML backend plugin, and every drop-in it names listed for
     * ServiceLoader as an Estimator; and what it must not get from it: a second copy of the Connect protos, of
     * their relocated gRPC and protobuf, or service files for them.
     */
    @Test
    void aSparkConnectServerFindsThePluginAndItsDropInsAndNothingOfItsOwn() throws Exception {
        try (JarFile jar = new JarFile(libraryJar().toFile())) {
            assertTrue(jar.getJarEntry("org/switchml/spark/connect/SwitchMLBackend.class") != null, "no plugin");
            final List<String> estimators = text(jar, "META-INF/services/org.apache.spark.ml.Estimator")
                    .lines()
                    .map(String::strip)
                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                    .toList();
            assertEquals(
                    List.of(
                            "org.switchml.spark.ml.classification.SwitchMLLogisticRegression",
                            "org.switchml.spark.ml.classification.SwitchMLLinearSVC",
                            "org.switchml.spark.ml.regression.SwitchMLLinearRegression"),
                    estimators);
            for (final String provider : estimators) {
                assertTrue(jar.getJarEntry(provider.replace('.', '/') + ".class") != null, provider);
            }
            final List<String> foreign = new ArrayList<>();
            for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
                final String name = e.nextElement().getName();
                if (name.startsWith("org/apache/spark/")
                        || name.startsWith("org/sparkproject/")
                        || name.startsWith("spark/connect/")
                        || name.startsWith("META-INF/services/org.sparkproject")) {
                    foreign.add(name);
                }
            }
            assertTrue(foreign.isEmpty(), "Spark's own classes or Connect files in the jar: " + foreign);
        }
    }

    @Test
    void p4RuntimeKeepsItsWireNames() throws Exception {
        // The class is relocated, but the gRPC service name must stay what every P4Runtime server serves.
        try (URLClassLoader loader =
                new URLClassLoader(new URL[] {libraryJar().toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
            final Class<?> grpc = Class.forName("org.switchml.shaded.p4.v1.P4RuntimeGrpc", false, loader);
            assertEquals("p4.v1.P4Runtime", grpc.getField("SERVICE_NAME").get(null));
            final Class<?> write =
                    Class.forName("org.switchml.shaded.p4.v1.P4RuntimeOuterClass$WriteRequest", true, loader);
            final Object descriptor = write.getMethod("getDescriptor").invoke(null);
            assertEquals(
                    "p4.v1.WriteRequest",
                    descriptor.getClass().getMethod("getFullName").invoke(descriptor));
        }
    }
}
