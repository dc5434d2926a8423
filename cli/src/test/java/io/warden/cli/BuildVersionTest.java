package io.warden.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;

import static org.assertj.core.api.Assertions.assertThat;

class BuildVersionTest {
    /** The version Maven builds (the cli pom passes ${project.version} to the tests). */
    private static String expected() {
        String v = System.getProperty("warden.expected.version");
        assertThat(v).as("system property warden.expected.version (set by the cli pom)").isNotBlank();
        return v;
    }

    @Test
    void version_isExactlyTheArtifactVersion() {
        CommandLine cmd = WardenCli.commandLine();
        StringWriter out = new StringWriter();
        cmd.setOut(new PrintWriter(out, true));
        assertThat(cmd.execute("--version")).isZero();
        assertThat(out.toString()).isEqualTo(expected() + System.lineSeparator());
    }

    @Test
    void everySubcommandPrintsTheSameVersion() {
        for (String sub : WardenCli.commandLine().getSubcommands().keySet()) {
            if (sub.equals("help")) {
                continue;
            }
            CommandLine cmd = WardenCli.commandLine();
            StringWriter out = new StringWriter();
            cmd.setOut(new PrintWriter(out, true));
            assertThat(cmd.execute(sub, "--version")).as(sub).isZero();
            assertThat(out.toString()).as(sub).isEqualTo(expected() + System.lineSeparator());
        }
    }
}
