package io.warden.it.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.warden.it.support.RepoRoot;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/**
 * How {@link ReadmeWalkthroughIT} reads the README's walk-through: the steps it cuts, the replies it expects, and that a
 * walk-through of another shape is refused rather than checked as nothing.
 */
class WalkthroughTest {
    private static final String README = """
            # Warden

            ## A walk-through with curl

            Some prose.

            ```sh
            W=http://localhost:7070
            post() { curl -s -w '\\n' -X POST "$W$1" -d "$2"; }

            # 1. alice opens a session
            A=$(post /v1/sessions '{"client_id":"alice"}' | tee /dev/stderr | jq -r .session_id)
            #    201 {"session_id":"3bd96cf01cc06a2fcdd706bbd0c2f5e2","ttl_ms":120000,"revision":35}

            # 2. anyone can look
            curl -s $W/v1/locks/x
            #    {"name":"x","holders":[{…alice…}],
            #     "waiters":[],"revision":18}
            #    (a remark)
            curl -s $W/v1/locks/y
            #    {"name":"y","request_id":"auto-…"}
            ```

            ```sh
            echo another block
            ```
            """;

    @Test
    void parse_cutsTheBlockAtItsStepComments_andJoinsARepliesLines() {
        Walkthrough walk = Walkthrough.parse(README);

        assertThat(walk.setupText("http://localhost:1234")).startsWith("W=http://localhost:1234\npost() {");
        assertThat(walk.steps()).extracting(Walkthrough.Step::number).containsExactly(1, 2);
        assertThat(walk.steps().get(0).title()).isEqualTo("alice opens a session");
        assertThat(walk.steps().get(0).text()).startsWith("# 1. alice opens a session\nA=$(post ").endsWith("\n");
        assertThat(walk.steps().get(1).replies()).extracting(Walkthrough.ShownReply::text).containsExactly(
                "{\"name\":\"x\",\"holders\":[{…alice…}],\"waiters\":[],\"revision\":18}",
                "{\"name\":\"y\",\"request_id\":\"auto-…\"}");
    }

    @Test
    void shownReply_matchesTheSameReply_withOtherIdsTokensRevisions_andAnythingForAnEllipsis() {
        Walkthrough.ShownReply session = Walkthrough.parse(README).steps().get(0).replies().get(0);
        assertThat(session.matches("{\"session_id\":\"0123abcd\",\"ttl_ms\":120000,\"revision\":7}")).isTrue();
        assertThat(session.matches("{\"session_id\":\"0123abcd\",\"ttl_ms\":10000,\"revision\":7}")).isFalse();
        assertThat(session.matches("{\"session_id\":\"0123abcd\",\"ttl_ms\":120000}")).isFalse();
        assertThat(session.matches("{\"type\":\"https://warden.dev/problems/session-not-found\",\"status\":404}"))
                .isFalse();

        Walkthrough.ShownReply look = Walkthrough.parse(README).steps().get(1).replies().get(0);
        assertThat(look.matches("{\"name\":\"x\",\"holders\":[{\"session_id\":\"ab\",\"client_id\":\"alice\"}],"
                + "\"waiters\":[],\"revision\":19}")).isTrue();
        assertThat(look.matches("{\"name\":\"x\",\"holders\":[{\"session_id\":\"ab\",\"client_id\":\"bob\"}],"
                + "\"waiters\":[],\"revision\":19}")).isFalse();
        assertThat(new Walkthrough.ShownReply("{\"status\":\"GRANTED\",\"token\":16}")
                .matches("{\"status\":\"QUEUED\",\"token\":16}")).isFalse();
    }

    @Test
    void parse_refusesAWalkthroughOfAnotherShape_namingWhatItFound() {
        assertRefused(README.replace("## A walk-through with curl", "## Trying it"), "heading");
        assertRefused(README + "\n## A walk-through with curl\n", "once");
        assertRefused(README.replace("```sh\nW=", "```bash\nW="), "```sh block");
        assertRefused(README.replace("W=http://localhost:7070", "W=http://localhost:8080"), "should start with");
        assertRefused(README.replace("# 1. alice", "# one: alice").replace("# 2. anyone", "# two: anyone"),
                "no step comment");
        assertRefused(README.replace("# 2. anyone", "# 3. anyone"), "numbered");
        assertRefused(README.replace("curl -s $W/v1/locks/x\n", "").replace("curl -s $W/v1/locks/y\n", ""),
                "has no command");
        assertRefused(README.replace("#    201 {", "#    201 ("), "shows no reply");
        assertRefused(README.replace("#     \"waiters\":[],\"revision\":18}", "#     \"waiters\":[]"),
                "does not close its braces");
        assertRefused("# Warden\n\n## A walk-through with curl\n\n```sh\nW=http://localhost:7070\n", "not closed");
    }

    @Test
    void theReadme_hasAWalkthroughOfThisShape() throws IOException {
        Walkthrough walk = Walkthrough.parse(Files.readString(RepoRoot.path().resolve("README.md"), StandardCharsets.UTF_8));
        assertThat(walk.steps()).hasSizeGreaterThanOrEqualTo(2);
        assertThat(walk.steps()).allSatisfy(step -> assertThat(step.replies()).isNotEmpty());
        assertThat(walk.steps().stream().flatMap(step -> step.replies().stream()).map(Walkthrough.ShownReply::text)
                .filter(reply -> reply.contains("\"status\":\"GRANTED\"")).toList())
                .as("the walk-through shows the lock granted, then passed on").hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    void aMissingTool_failsTheWalkthrough_namingItsPackage() {
        ReadmeWalkthroughIT.requireOnPath("bash", "/nonexistent:" + System.getenv("PATH"));
        assertThatThrownBy(() -> ReadmeWalkthroughIT.requireOnPath("jq", "/nonexistent"))
                .isInstanceOf(AssertionError.class).hasMessageContaining("install the Debian package jq");
    }

    private static void assertRefused(String readme, String because) {
        assertThatThrownBy(() -> Walkthrough.parse(readme)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(because);
    }
}
