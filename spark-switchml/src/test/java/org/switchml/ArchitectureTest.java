package org.switchml;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The package rules of the design: dependencies point one way, from spark down to protocol.
 * protocol ← transport ← {dataplane, client}; p4info (P4Runtime names) ← {dataplane.runtime (the switch's
 * own P4Runtime server, beside the dataplane), control (the controller)}; everything ← spark ← spark.ml.
 */
class ArchitectureTest {
    private static JavaClasses classes;

    @BeforeAll
    static void load() {
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("org.switchml");
    }

    @Test
    void protocolDependsOnNothingElseOfOurs() {
        noClasses().that().resideInAPackage("org.switchml.protocol..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.transport..", "org.switchml.dataplane..", "org.switchml.client..",
                        "org.switchml.control..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void transportKnowsOnlyTheProtocol() {
        noClasses().that().resideInAPackage("org.switchml.transport..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.dataplane..", "org.switchml.client..", "org.switchml.control..",
                        "org.switchml.spark..")
                .allowEmptyShould(true)
                .check(classes);
    }

    @Test
    void clientNeverReachesIntoTheSwitch() {
        noClasses().that().resideInAPackage("org.switchml.client..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.dataplane..", "org.switchml.control..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void dataplaneKnowsNoClientNorAnythingAbove() {
        noClasses().that().resideInAPackage("org.switchml.dataplane..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.client..", "org.switchml.control..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void theControllerNeverReachesIntoTheSwitch() {
        // The controller talks to any switch (BMv2 or ours) only over P4Runtime.
        noClasses().that().resideInAPackage("org.switchml.control..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.dataplane..", "org.switchml.client..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void p4InfoNamesAreSharedByBothSidesAndKnowNeither() {
        noClasses().that().resideInAPackage("org.switchml.p4info..")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.dataplane..", "org.switchml.control..", "org.switchml.client..",
                        "org.switchml.transport..", "org.switchml.spark..")
                .check(classes);
    }

    @Test
    void onlyTheControlPlaneSpeaksP4RuntimeOrGrpc() {
        // The packet path (protocol, transport, dataplane core, client) must not pull in the control plane or
        // its gRPC/protobuf stack; only the switch's P4Runtime server (dataplane.runtime) and the controller do.
        noClasses().that().resideInAnyPackage("org.switchml.protocol..", "org.switchml.transport..",
                        "org.switchml.client..")
                .or().resideInAPackage("org.switchml.dataplane")
                .should().dependOnClassesThat().resideInAnyPackage(
                        "org.switchml.control..", "org.switchml.p4info..", "org.switchml.dataplane.runtime..",
                        "io.grpc..", "p4..", "com.google.protobuf..", "com.google.rpc..")
                .check(classes);
    }

    @Test
    void nothingBelowSparkDependsOnSpark() {
        noClasses().that().resideOutsideOfPackage("org.switchml.spark..")
                .should().dependOnClassesThat().resideInAPackage("org.switchml.spark..")
                .check(classes);
        noClasses().that().resideOutsideOfPackages("org.switchml.spark..")
                .should().dependOnClassesThat().resideInAnyPackage("org.apache.spark..", "scala..")
                .check(classes);
    }

    @Test
    void packagesAreFreeOfCycles() {
        slices().matching("org.switchml.(*)..").should().beFreeOfCycles().check(classes);
    }
}
