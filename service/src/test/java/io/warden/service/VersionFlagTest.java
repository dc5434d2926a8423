package io.warden.service;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.service.config.BuildInfo;
import io.warden.service.config.ConfigLoader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;

/**
 * {@code java -jar warden-service.jar --version} prints the Maven artifact version of the build, and only that (the
 * packaged jar itself: integration-tests' ServiceJarVersionIT).
 */
class VersionFlagTest {

    /** The version in this module's pom.xml (its parent's: the module declares none of its own). */
    private static String pomVersion() throws Exception {
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(Path.of("pom.xml").toFile()).getDocumentElement();
        Element parent = (Element) project.getElementsByTagName("parent").item(0);
        return parent.getElementsByTagName("version").item(0).getTextContent().strip();
    }

    @Test
    void build_version_is_the_pom_version() throws Exception {
        assertThat(BuildInfo.version()).isEqualTo(pomVersion()).doesNotContain("$");
    }

    @Test
    void version_flag_prints_exactly_the_version() throws Exception {
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream out = System.out;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            Main.main(new String[] {"--version"});
        } finally {
            System.setOut(out);
        }
        assertThat(captured.toString(StandardCharsets.UTF_8)).isEqualTo(pomVersion() + System.lineSeparator());
    }

    @Test
    void help_names_the_version_flag() {
        assertThat(ConfigLoader.usage()).contains("--version").contains("0 after --help or --version");
    }
}
