package io.warden.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/** The module's README names this module's coordinates, a real install command, and classes that exist. */
class ReadmeTest {
    private static final Path MODULE = Path.of(".");

    private static String readme() throws Exception {
        return Files.readString(MODULE.resolve("README.md"));
    }

    @Test
    void dependency_isThisModule_atTheBuiltVersion() throws Exception {
        Document pom = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(MODULE.resolve("pom.xml").toFile());
        var xpath = XPathFactory.newInstance().newXPath();
        Matcher m = Pattern.compile("<dependency>\\s*<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)</artifactId>"
                + "\\s*<version>([^<]+)</version>\\s*</dependency>").matcher(readme());

        assertThat(m.find()).isTrue();
        assertThat(m.group(1)).isEqualTo(xpath.evaluate("/project/parent/groupId", pom));
        assertThat(m.group(2)).isEqualTo(xpath.evaluate("/project/artifactId", pom));
        assertThat(m.group(3)).isEqualTo(xpath.evaluate("/project/parent/version", pom));
    }

    @Test
    void installCommand_namesRealModules() throws Exception {
        Matcher m = Pattern.compile("mvn -q install -pl ([\\w,-]+) -am -DskipTests").matcher(readme());
        assertThat(m.find()).isTrue();
        for (String module : m.group(1).split(",")) {
            assertThat(MODULE.resolve("..").resolve(module).resolve("pom.xml")).as("module %s", module).exists();
        }
        assertThat(m.group(1).split(",")).contains("shedlock-warden", "client-sdk");
    }

    @Test
    void imports_ofWardenAndShedLockCore_nameExistingClasses() throws Exception {
        Matcher m = Pattern.compile("(?m)^import ((?:io\\.warden|net\\.javacrumbs\\.shedlock\\.core)\\.[\\w.]+);$").matcher(readme());
        List<String> imports = new ArrayList<>();
        while (m.find()) {
            imports.add(m.group(1));
        }
        assertThat(imports).contains("io.warden.shedlock.WardenLockProvider", "io.warden.shedlock.WardenShedLock");
        for (String name : imports) {
            assertThat(Class.forName(name)).as(name).isNotNull();
        }
    }
}
