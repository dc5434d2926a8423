package io.warden.service.http;

import static org.assertj.core.api.Assertions.assertThat;

import io.swagger.parser.OpenAPIParser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import io.warden.service.Gateway;
import io.warden.service.support.WardenFixture;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The OpenAPI document ({@code openapi.json}) against the gateway that serves it: the same routes and methods as the
 * running Javalin router (the console's excepted), served as it is kept, and a valid OpenAPI 3.1 document.
 */
class OpenApiRoutesTest {
    private static WardenFixture fixture;
    private static Gateway gateway;
    private static HttpTestClient http;
    private static final OpenApiContract CONTRACT = OpenApiContract.load();

    @BeforeAll
    static void start() throws Exception {
        fixture = new WardenFixture();
        gateway = fixture.gateway();
        http = new HttpTestClient(gateway.httpPort());
    }

    @AfterAll
    static void stop() throws Exception {
        fixture.close();
    }

    /** "GET /v1/locks/{name}" for every route the router has, Javalin's {@code <name>} written as OpenAPI's {@code {name}}. */
    private static Set<String> servedRoutes() {
        return gateway.httpApi().servedRoutes().stream()
                .filter(r -> !r.template().equals("/console") && !r.template().startsWith("/console/"))
                .map(r -> r.method() + " " + r.template().replaceAll("<([^>]+)>", "{$1}"))
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private static Set<String> documentedRoutes() {
        return CONTRACT.operations().stream().map(o -> o.method() + " " + o.path())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    @Test
    void everyServedRoute_isInTheDocument_andViceVersa() {
        Set<String> served = servedRoutes();
        assertThat(served).as("the router's routes").contains("POST /v1/acquire", "GET /v1/locks/{name}",
                "GET /v1/sessions/{session_id}/keepalive");
        assertThat(documentedRoutes()).as("the document's operations, against the routes served")
                .containsExactlyInAnyOrderElementsOf(served);
    }

    @Test
    void theConsole_isServed_butLeftOutOfTheDocument() {
        assertThat(gateway.httpApi().servedRoutes()).anyMatch(r -> r.template().startsWith("/console"));
        assertThat(documentedRoutes()).noneMatch(r -> r.contains(" /console"));
    }

    @Test
    void theServedDocument_isTheResource() {
        HttpTestClient.Reply r = http.get(OpenApi.PATH);
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.contentType()).startsWith("application/json");
        assertThat(r.text().getBytes(StandardCharsets.UTF_8)).isEqualTo(OpenApi.document());
        assertThat(r.text()).isEqualTo(CONTRACT.text());
    }

    @Test
    void theDocument_isValidOpenApi31_withoutAMessage() {
        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        SwaggerParseResult result = new OpenAPIParser().readContents(CONTRACT.text(), null, options);
        assertThat(result.getMessages()).as("swagger-parser's messages").isEmpty();
        assertThat(result.getOpenAPI()).isNotNull();
        assertThat(result.getOpenAPI().getOpenapi()).isEqualTo("3.1.0");
        assertThat(result.getOpenAPI().getPaths()).hasSize((int) CONTRACT.operations().stream().map(OpenApiContract.Operation::path).distinct().count());
    }
}
