package io.warden.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.warden.it.support.GatewayProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.xpath.XPathFactory;
import org.junit.jupiter.api.Test;

/** The packaged gateway, {@code java -jar service/target/warden-service.jar --version}: the build's version, alone. */
class ServiceJarVersionIT {

    @Test
    void jar_prints_the_maven_artifact_version() throws Exception {
        String expected = XPathFactory.newInstance().newXPath().evaluate("/project/version",
                DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(Path.of("..", "pom.xml").toFile()));
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "-jar", GatewayProcess.serviceJar().toString(), "--version")
                .redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("java -jar ... --version ended").isTrue();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(output).isEqualTo(expected.strip() + System.lineSeparator());
        assertThat(p.exitValue()).isZero();
    }
}
