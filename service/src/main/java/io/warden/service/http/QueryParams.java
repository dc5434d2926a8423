package io.warden.service.http;

import io.warden.service.api.WardenException;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A query string read as strictly as a body: only the call's parameters, each at most once. An empty value
 * ({@code ?prefix=}) counts as absent.
 */
final class QueryParams {
    private final Map<String, List<String>> params;

    private QueryParams(Map<String, List<String>> params) {
        this.params = params;
    }

    static QueryParams of(Map<String, List<String>> params, Set<String> allowed) {
        for (Map.Entry<String, List<String>> e : params.entrySet()) {
            if (!allowed.contains(e.getKey())) {
                throw WardenException.invalid(Fields.abbreviate(e.getKey()), "is not a parameter of this call"
                        + (allowed.isEmpty() ? "" : " (allowed: " + String.join(", ", allowed.stream().sorted().toList()) + ")"));
            }
            if (e.getValue().size() > 1) {
                throw WardenException.invalid(e.getKey(), "is given " + e.getValue().size() + " times; give it once");
            }
        }
        return new QueryParams(params);
    }

    String optional(String name) {
        List<String> values = params.get(name);
        if (values == null || values.isEmpty() || values.get(0).isEmpty()) {
            return null;
        }
        return values.get(0);
    }

    String required(String name) {
        String value = optional(name);
        if (value == null) {
            throw WardenException.invalid(name, "is required");
        }
        return value;
    }
}
