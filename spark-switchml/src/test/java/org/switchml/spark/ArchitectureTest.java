package org.switchml.spark;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** Dependencies point one way: spark may use client/protocol/dataplane; nothing below uses spark. */
class ArchitectureTest {
    private static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("org.switchml");

    @Test
    void theLibraryBelowSparkDoesNotDependOnSpark() {
        noClasses().that().resideInAnyPackage("org.switchml.protocol..", "org.switchml.transport..",
                        "org.switchml.dataplane..", "org.switchml.client..")
                .should().dependOnClassesThat().resideInAnyPackage("org.switchml.spark..", "org.apache.spark..", "scala..")
                .check(MAIN);
    }
}
