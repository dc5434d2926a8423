package io.warden.service;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The service's layers run one way (docs/design.md, "Layers"), read from the compiled classes, so a new import that
 * breaks them fails here, naming the classes.
 */
class LayersTest {
    private static JavaClasses service;

    @BeforeAll
    static void importClasses() {
        service = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("io.warden.service");
    }

    @Test
    void noPackageImportsOneThatImportsItBack() {
        slices().matching("io.warden.service.(*)..").should().beFreeOfCycles().check(service);
    }

    @Test
    void sessionsKnowNoLocks_theyTellWhoeverListensThatTheyEnded() {
        noClasses().that().resideInAPackage("..service.session..").should().dependOnClassesThat()
                .resideInAPackage("..service.lock..").check(service);
    }

    @Test
    void thePlumbingKnowsNothingAboveIt() {
        noClasses().that().resideInAPackage("..service.zk..").should().dependOnClassesThat()
                .resideInAnyPackage("..service.lock..", "..service.session..", "..service.watch..", "..service.http..",
                        "..service.console..", "..service.queue..")
                .check(service);
    }

    @Test
    void settingsArePlainValues_theyKnowNoEdgeAndNoPlumbing() {
        noClasses().that().resideInAPackage("..service.config..").should().dependOnClassesThat()
                .resideInAnyPackage("..service.http..", "..service.auth..", "..service.zk..", "..service.console..")
                .check(service);
    }

    @Test
    void theEngineKnowsNoTransport() {
        noClasses().that().resideInAnyPackage("..service.lock..", "..service.session..", "..service.watch..",
                        "..service.queue..")
                .should().dependOnClassesThat().resideInAnyPackage("..service.http..", "..service.console..")
                .check(service);
    }
}
