package serve

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A replica's own messages, which every notification brings back to it,
// are recognised by how they begin; another replica's never are, even one
// whose id extends this one's.
func TestOwnRelayMessagesAreRecognisedBeforeDecoding(t *testing.T) {
	msg := func(origin string) string {
		b, err := json.Marshal(relayMessage{Origin: origin, Kind: "event", ID: "apr_1", Type: "decision", Tenant: "acme",
			At: time.Now(), Data: json.RawMessage(`{"o":"rep_1"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	own := ownPrefix("rep_1")
	if !strings.HasPrefix(msg("rep_1"), own) {
		t.Errorf("%s does not begin with %s", msg("rep_1"), own)
	}
	for _, other := range []string{"rep_12", "rep_", "rep_2", `rep_1"`} {
		if strings.HasPrefix(msg(other), own) {
			t.Errorf("a message from %q is taken for rep_1's: %s", other, msg(other))
		}
	}
}
