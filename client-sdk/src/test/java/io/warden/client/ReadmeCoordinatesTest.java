package io.warden.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPath;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;

/**
 * The README's instructions for getting the SDK: the coordinates it gives are this module's (group, artifact and the
 * version being built), the install command names modules that exist, the BOM it names lists the SDK, and every
 * {@code import io.warden...} in its Java snippets names a class that exists.
 */
class ReadmeCoordinatesTest {
    private static final Path ROOT = Path.of("..");
    private static final XPath XPATH = XPathFactory.newInstance().newXPath();

    private static Document pom(String module) throws Exception {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(ROOT.resolve(module).resolve("pom.xml").toFile());
    }

    private static String readme() throws Exception {
        return Files.readString(ROOT.resolve("README.md"));
    }

    @Test
    void readme_dependency_is_this_module_at_the_built_version() throws Exception {
        Document sdk = pom("client-sdk");
        String group = XPATH.evaluate("/project/parent/groupId", sdk);
        String artifact = XPATH.evaluate("/project/artifactId", sdk);
        String version = XPATH.evaluate("/project/parent/version", sdk);

        Matcher m = Pattern.compile("<dependency>\\s*<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)</artifactId>"
                + "\\s*<version>([^<]+)</version>\\s*</dependency>").matcher(readme());
        assertThat(m.find()).as("a <dependency> with groupId, artifactId and version in README.md").isTrue();
        assertThat(m.group(1)).isEqualTo(group);
        assertThat(m.group(2)).isEqualTo(artifact);
        assertThat(m.group(3)).isEqualTo(version);
        assertThat(readme()).contains("artifact `" + group + ":" + artifact + "`");
    }

    @Test
    void readme_install_command_names_real_modules_and_the_bom_lists_the_sdk() throws Exception {
        Matcher m = Pattern.compile("mvn -q install -pl ([\\w,-]+) -am -DskipTests").matcher(readme());
        assertThat(m.find()).as("the install command in README.md").isTrue();
        for (String module : m.group(1).split(",")) {
            assertThat(ROOT.resolve(module).resolve("pom.xml")).as("module %s of the install command", module).exists();
        }
        assertThat(m.group(1).split(",")).contains("bom", "client-sdk");

        Document bom = pom("bom");
        String version = XPATH.evaluate("/project/parent/version", pom("client-sdk"));
        assertThat(XPATH.evaluate("/project/groupId", bom) + ":" + XPATH.evaluate("/project/artifactId", bom))
                .isEqualTo("io.warden:warden-bom");
        assertThat(XPATH.evaluate("/project/version", bom)).isEqualTo(version);
        assertThat(XPATH.evaluate("/project/packaging", bom)).isEqualTo("pom");
        assertThat(XPATH.evaluate(
                "/project/dependencyManagement/dependencies/dependency[artifactId='warden-client']/version", bom))
                .isEqualTo("${project.version}");
        assertThat(XPATH.evaluate("count(/project/parent)", bom)).as("the BOM brings no parent's pins").isEqualTo("0");
        assertThat(readme()).contains("io.warden:warden-bom");
    }

    @Test
    void readme_imports_name_existing_classes() throws Exception {
        Matcher m = Pattern.compile("(?m)^import (io\\.warden\\.[\\w.]+);$").matcher(readme());
        List<String> imports = new ArrayList<>();
        while (m.find()) {
            imports.add(m.group(1));
        }
        assertThat(imports).contains("io.warden.client.WardenClient", "io.warden.client.FencedLock",
                "io.warden.client.Hold");
        for (String name : imports) {
            assertThat(Class.forName(name)).as(name).isNotNull();
        }
    }
}
