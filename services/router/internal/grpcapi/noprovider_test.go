package grpcapi_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestNoProviderSaysHowToAddOne: with no provider configured the router
// lists its catalogue with the setup help, and every request for a model
// (named, auto, default, or a Generate) fails FailedPrecondition with it,
// marked as no provider (origin.NoProvider) for the edge to tell apart.
func TestNoProviderSaysHowToAddOne(t *testing.T) {
	t.Parallel()
	const help = "set CUSTOM_API_URL in zen's environment, then restart zen"
	openai, err := catalogue.Embedded("openai")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := routing.New([]*routing.Provider{{Name: "openai", Models: openai}}, "")
	if err != nil {
		t.Fatalf("routing.New with no provider: %v", err)
	}
	reg.WithSetupHelp(help)
	c := serveRouter(t, grpcapi.New(reg, fastPolicy, slog.New(slog.DiscardHandler), telemetry.NewInstruments()))

	list, err := c.ListModels(t.Context(), &routerv1.ListModelsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := "no model provider is configured: " + help
	if list.GetSetupHelp() != want || len(list.GetModels()) == 0 || len(list.GetConfiguredProviders()) != 0 {
		t.Errorf("ListModels: setup_help %q, %d models, providers %v; want %q and the catalogue",
			list.GetSetupHelp(), len(list.GetModels()), list.GetConfiguredProviders(), want)
	}
	got := map[string]string{}
	for _, model := range []string{"gpt-5", "auto", ""} {
		_, err := c.ResolveModel(t.Context(), &routerv1.ResolveModelRequest{Model: model})
		got["resolve "+model] = failure(err)
	}
	_, _, err = generate(t.Context(), c, &routerv1.GenerateRequest{Model: "gpt-5",
		Messages: []*routerv1.Message{{Role: "user", Content: "hi"}}})
	got["generate"] = failure(err)
	wantErr := codes.FailedPrecondition.String() + " " + string(origin.NoProvider) + ": " + want
	if diff := cmp.Diff(map[string]string{"resolve gpt-5": wantErr, "resolve auto": wantErr, "resolve ": wantErr,
		"generate": wantErr}, got); diff != "" {
		t.Errorf("asking for a model with no provider (-want +got):\n%s", diff)
	}
	if strings.Contains(list.GetSetupHelp(), "%") {
		t.Errorf("setup help is badly formatted: %q", list.GetSetupHelp())
	}
}

// failure is an error's code, origin and message.
func failure(err error) string {
	reason, _ := origin.Of(err)
	return status.Code(err).String() + " " + string(reason) + ": " + status.Convert(err).Message()
}
