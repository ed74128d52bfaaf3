package org.switchml;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The package rules of the design: dependencies point one way, from spark.ml down to protocol.
 * protocol ← transport ← {dataplane, client}; p4info (P4Runtime names) ← {dataplane.p4runtime (the switch's
 * own P4Runtime server, beside the dataplane), control (the controller)}. Inside Spark:
 * spark.config ← spark.messages ← {spark.registrar, spark.executor} ← spark.driver ← spark (the public API)
 * ← spark.ml (the estimators), which run the optimizers of optim (plain Java, below everything);
 * spark.shard (the switch shard an executor hosts) ← spark.executor. Inside spark.ml: spark.ml.linear (what every
 * linear estimator shares: input, statistics, objectives, loop, reports) ← {spark.ml.classification,
 * spark.ml.regression} (the estimators, each knowing only its own MLlib parent's ways).
 */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void load() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("org.switchml");
    }

    @Test
    void protocolDependsOnNothingElseOfOurs() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.protocol..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.transport..",
                        "org.switchml.dataplane..",
                        "org.switchml.client..",
                        "org.switchml.control..",
                        "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void transportKnowsOnlyTheProtocol() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.transport..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.dataplane..",
                        "org.switchml.client..",
                        "org.switchml.control..",
                        "org.switchml.spark..")
                .allowEmptyShould(true)
                .check(classes);
    }

    @Test
    void clientNeverReachesIntoTheSwitch() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.client..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.switchml.dataplane..", "org.switchml.control..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void dataplaneKnowsNoClientNorAnythingAbove() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.dataplane..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.switchml.client..", "org.switchml.control..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void theControllerNeverReachesIntoTheSwitch() {
        // The controller talks to any switch (BMv2 or ours) only over P4Runtime.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.control..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.dataplane..",
                        "org.switchml.client..",
                        "org.switchml.spark..",
                        "org.switchml.service..")
                .check(classes);
    }

    @Test
    void authenticationKnowsOnlyGrpc() {
        classes()
                .that()
                .resideInAPackage("org.switchml.auth..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("org.switchml.auth..", "io.grpc..", "java..")
                .check(classes);
    }

    @Test
    void theJobServiceDrivesTheSwitchOnlyThroughItsController() {
        // The service owns a switch through the controller (P4Runtime), so the same service fronts BMv2 and the
        // software switch; only the programs that start a software switch beside it know the dataplane.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.service")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.dataplane..",
                        "org.switchml.client..",
                        "org.switchml.transport..",
                        "org.switchml.spark..",
                        "org.switchml.service.standalone..")
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage("org.switchml.service.standalone..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.switchml.client..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void theJobServiceKnowsNoP4Names() {
        // Counter and table names are the controller's business: the service asks it for what it needs.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.service")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.p4info..")
                .check(classes);
    }

    @Test
    void aSwitchStackKnowsNothingAboveTheService() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.service.stack")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark..", "org.switchml.client..", "org.switchml.service.standalone..")
                .check(classes);
    }

    @Test
    void p4InfoNamesAreSharedByBothSidesAndKnowNeither() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.p4info..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.dataplane..",
                        "org.switchml.control..",
                        "org.switchml.client..",
                        "org.switchml.transport..",
                        "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void onlyTheControlPlaneSpeaksP4RuntimeOrGrpc() {
        // The packet path (protocol, transport, dataplane core, client) must not pull in the control plane or
        // its gRPC/protobuf stack; only the switch's P4Runtime server (dataplane.p4runtime) and the controller do.
        noClasses()
                .that()
                .resideInAnyPackage("org.switchml.protocol..", "org.switchml.transport..", "org.switchml.client..")
                .or()
                .resideInAPackage("org.switchml.dataplane")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.control..",
                        "org.switchml.p4info..",
                        "org.switchml.dataplane.p4runtime..",
                        "org.switchml.auth..",
                        "org.switchml.service..",
                        "io.grpc..",
                        "p4..",
                        "com.google.protobuf..",
                        "com.google.rpc..")
                .check(classes);
    }

    @Test
    void theOptimizersKnowOnlyJava() throws IOException {
        // Plain step machines over double arrays: carried by Spark's loop, but knowing nothing of it, in bytecode
        // or in imports that only javadoc uses (which the bytecode does not show).
        classes()
                .that()
                .resideInAPackage("org.switchml.optim..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage("org.switchml.optim..", "java..")
                .check(classes);
        final List<String> imports;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java/org/switchml/optim"))) {
            imports = files.filter(f -> f.toString().endsWith(".java"))
                    .flatMap(ArchitectureTest::lines)
                    .filter(l -> l.startsWith("import "))
                    .toList();
        }
        assertTrue(imports.contains("import java.io.Serializable;"), "the sources were not read: " + imports);
        final List<String> foreign = imports.stream()
                .filter(l -> !l.matches("import (static )?java\\..*"))
                .toList();
        assertTrue(foreign.isEmpty(), "imports outside java.* in org.switchml.optim: " + foreign);
    }

    /**
     * The rules above read bytecode, where an import that only javadoc uses leaves no trace: such an import could
     * break a package rule unseen. So no import of ours may be used by comments alone (a javadoc link then names
     * the class in full).
     */
    @Test
    void noImportOfOursIsUsedOnlyInComments() throws IOException {
        final List<String> commentOnly = new ArrayList<>();
        int checked = 0;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java/org/switchml"))) {
            for (final Path f :
                    files.filter(p -> p.toString().endsWith(".java")).toList()) {
                final String text = Files.readString(f);
                final String code = withoutCommentsAndStrings(text);
                final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                                "(?m)^import (org\\.switchml\\.[\\w.]*\\.(\\w+));")
                        .matcher(code);
                while (m.find()) {
                    checked++;
                    final String simple = m.group(2);
                    final String rest = code.replaceAll("(?m)^import .*;$", "");
                    if (!java.util.regex.Pattern.compile("\\b" + simple + "\\b")
                            .matcher(rest)
                            .find()) {
                        commentOnly.add(f + ": " + m.group(1));
                    }
                }
            }
        }
        assertTrue(checked > 100, "the sources were not read: " + checked + " imports of ours");
        assertTrue(commentOnly.isEmpty(), "imports used only in comments: " + commentOnly);
    }

    /** {@code source} with its comments and string, text block and char literals blanked out. */
    static String withoutCommentsAndStrings(final String source) {
        final StringBuilder out = new StringBuilder(source.length());
        int i = 0;
        while (i < source.length()) {
            final char c = source.charAt(i);
            if (source.startsWith("/*", i)) {
                final int end = source.indexOf("*/", i + 2);
                i = end < 0 ? source.length() : end + 2;
                out.append(' ');
            } else if (source.startsWith("//", i)) {
                final int end = source.indexOf('\n', i);
                i = end < 0 ? source.length() : end;
            } else if (source.startsWith("\"\"\"", i)) {
                final int end = source.indexOf("\"\"\"", i + 3);
                i = end < 0 ? source.length() : end + 3;
                out.append("\"\"");
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < source.length() && source.charAt(j) != c && source.charAt(j) != '\n') {
                    j += source.charAt(j) == '\\' ? 2 : 1;
                }
                i = j + 1;
                out.append(c).append(c);
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    private static Stream<String> lines(final Path file) {
        try {
            return Files.readAllLines(file).stream();
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Test
    void nothingBelowSparkDependsOnSpark() {
        noClasses()
                .that()
                .resideOutsideOfPackage("org.switchml.spark..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.spark..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackages("org.switchml.spark..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.apache.spark..", "scala..")
                .check(classes);
    }

    @Test
    void noGrpcAboveTheControlPlane() {
        // Spark code asks the controller (org.switchml.control) for what it needs; the gRPC and P4Runtime
        // types stay below it.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("io.grpc..", "p4..", "com.google.protobuf..", "com.google.rpc..")
                .check(classes);
    }

    @Test
    void sparkConfigurationKnowsNoOtherSparkRoom() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.config")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark",
                        "org.switchml.spark.messages..",
                        "org.switchml.spark.registrar..",
                        "org.switchml.spark.executor..",
                        "org.switchml.spark.driver..",
                        "org.switchml.spark.ml..")
                .check(classes);
    }

    @Test
    void sparkMessagesKnowOnlyTheConfiguration() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.messages")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark",
                        "org.switchml.spark.registrar..",
                        "org.switchml.spark.executor..",
                        "org.switchml.spark.driver..",
                        "org.switchml.spark.ml..")
                .check(classes);
    }

    @Test
    void registrarsKnowNeitherDriverNorExecutor() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.registrar")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark",
                        "org.switchml.spark.executor..",
                        "org.switchml.spark.driver..",
                        "org.switchml.spark.ml..",
                        "org.switchml.service.standalone..")
                .check(classes);
    }

    @Test
    void theExecutorSideKnowsNoDriverSide() {
        // An executor reaches the driver only through messages (org.switchml.spark.messages), and never the switch's
        // control plane.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.executor")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark",
                        "org.switchml.spark.registrar..",
                        "org.switchml.spark.driver..",
                        "org.switchml.spark.ml..",
                        "org.switchml.control..",
                        "org.switchml.dataplane..")
                .check(classes);
    }

    @Test
    void anExecutorsShardKnowsOnlyTheSwitch() {
        // The shard an executor hosts is a software switch with its parts; the worker side, the driver and the
        // control plane are none of its business.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.shard")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark",
                        "org.switchml.spark.messages..",
                        "org.switchml.spark.registrar..",
                        "org.switchml.spark.executor..",
                        "org.switchml.spark.driver..",
                        "org.switchml.spark.ml..",
                        "org.switchml.client..",
                        "org.switchml.control..",
                        "org.switchml.service..",
                        "org.apache.spark..")
                .check(classes);
    }

    @Test
    void theDriverSideIsBelowThePublicApi() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.driver")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.switchml.spark", "org.switchml.spark.ml..")
                .check(classes);
    }

    @Test
    void theDriverSideStartsNoSwitchItself() {
        // A switch of the driver's own is a registrar's (the embedded one), so the driver side knows jobs, not packets.
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.driver")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.dataplane..")
                .check(classes);
    }

    @Test
    void theSparkApiKnowsNoEstimator() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark..")
                .and()
                .resideOutsideOfPackages("org.switchml.spark.ml..", "org.switchml.spark.connect..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.spark.ml..")
                .check(classes);
    }

    @Test
    void sparkConnectIsTheTopAndKnowsOnlyTheEstimatorsAndThePublicApi() {
        // The Connect plugin names drop-ins of spark.ml; what lies below the public API is none of its business.
        classes()
                .that()
                .resideInAPackage("org.switchml.spark.connect..")
                .should()
                .onlyDependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark",
                        "org.switchml.spark.ml..",
                        "org.switchml.spark.connect..",
                        "java..",
                        "scala..",
                        "org.apache.spark..",
                        "org.slf4j..")
                .check(classes);
        noClasses()
                .that()
                .resideOutsideOfPackage("org.switchml.spark.connect..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.spark.connect..")
                .check(classes);
    }

    @Test
    void estimatorsReachTheSwitchOnlyThroughTheSparkApi() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.ml..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "org.switchml.spark.messages..",
                        "org.switchml.spark.registrar..",
                        "org.switchml.spark.executor..",
                        "org.switchml.spark.driver..",
                        "org.switchml.client..",
                        "org.switchml.transport..",
                        "org.switchml.dataplane..",
                        "org.switchml.control..",
                        "org.switchml.p4info..")
                .check(classes);
    }

    @Test
    void theSharedLinearPartsKnowNoEstimator() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.ml.linear..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("org.switchml.spark.ml.classification..", "org.switchml.spark.ml.regression..")
                .check(classes);
    }

    @Test
    void classifiersAndRegressorsKnowEachOtherNot() {
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.ml.classification..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.spark.ml.regression..")
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage("org.switchml.spark.ml.regression..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("org.switchml.spark.ml.classification..")
                .check(classes);
    }

    @Test
    void theSparkPackageHoldsOnlyPublicApi() {
        classes()
                .that()
                .resideInAPackage("org.switchml.spark")
                .and()
                .areTopLevelClasses()
                .and()
                .doNotHaveSimpleName("package-info")
                .should()
                .bePublic()
                .check(classes);
    }

    @Test
    void packagesAreFreeOfCycles() {
        // Every package is its own slice, sub-packages included: org.switchml.spark and org.switchml.spark.ml
        // are two slices, so a dependency back from one to the other is a cycle.
        slices().matching("org.switchml.(**)").should().beFreeOfCycles().check(classes);
    }

    @Test
    void everyPackageSaysWhatItIsFor() throws IOException {
        final Path root = Path.of("src/main/java");
        final List<Path> missing;
        try (Stream<Path> dirs = Files.walk(root)) {
            missing = dirs.filter(Files::isDirectory)
                    .filter(d -> hasJavaSources(d) && !Files.exists(d.resolve("package-info.java")))
                    .toList();
        }
        assertTrue(missing.isEmpty(), "packages without a package-info.java: " + missing);
    }

    private static boolean hasJavaSources(final Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.anyMatch(f -> f.toString().endsWith(".java"));
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
