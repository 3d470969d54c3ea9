package authoring

import (
	"fmt"
	"regexp"
)

// Description inference: whole-word, case-insensitive matches of a
// description against a few vocabularies. Each rule says what it implies;
// explicit arguments always win over anything inferred, and dependencies are
// never inferred (a database named in prose is not a declared dependency).

type inferredInterface struct {
	name, typ, visibility string
}

type inference struct {
	interfaces []inferredInterface
	stores     bool
	survives   bool
	shared     bool
	workload   string
	derived    []string
}

type inferRule struct {
	re    *regexp.Regexp
	apply func(inf *inference, word string)
}

func words(alternatives string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(` + alternatives + `)\b`)
}

var inferRules = []inferRule{
	{words(`REST|HTTP|APIs?|web`), func(inf *inference, w string) {
		inf.addInterface(inferredInterface{"http-api", "openapi", "public"}, w)
	}},
	{words(`gRPC`), func(inf *inference, w string) {
		inf.addInterface(inferredInterface{"grpc-api", "grpc", "internal"}, w)
	}},
	{words(`events?|kafka|nats|pubsub|queues?|messages?|messaging|rabbit(mq)?`), func(inf *inference, w string) {
		inf.addInterface(inferredInterface{"events", "asyncapi", ""}, w)
	}},
	{words(`postgres|mysql|databases?|db|mongo(db)?|dynamo(db)?|cockroach(db)?|sql`), func(inf *inference, w string) {
		inf.stores, inf.survives, inf.shared = true, true, true
		inf.derived = append(inf.derived, fmt.Sprintf("state stateful, shared, persistent: the description mentions %q", w))
	}},
	{words(`redis|cache|caches|memcached?`), func(inf *inference, w string) {
		inf.stores = true
		inf.derived = append(inf.derived, fmt.Sprintf("state stateful: the description mentions %q", w))
	}},
	{words(`stateful|persistent|stores data|durable`), func(inf *inference, w string) {
		inf.stores, inf.survives = true, true
		inf.derived = append(inf.derived, fmt.Sprintf("state stateful, persistent: the description says %q", w))
	}},
	{words(`workers?|consumers?|processors?`), func(inf *inference, w string) {
		inf.setWorkload("job", w)
	}},
	{words(`cron|scheduled|periodic|batch`), func(inf *inference, w string) {
		inf.setWorkload("scheduled", w)
	}},
}

func (inf *inference) addInterface(i inferredInterface, word string) {
	for _, have := range inf.interfaces {
		if have.name == i.name {
			return
		}
	}
	inf.interfaces = append(inf.interfaces, i)
	inf.derived = append(inf.derived, fmt.Sprintf("interface %q (%s): the description mentions %q", i.name, i.typ, word))
}

func (inf *inference) setWorkload(w, word string) {
	if inf.workload == "scheduled" { // the more specific reading wins
		return
	}
	inf.workload = w
	inf.derived = append(inf.derived, fmt.Sprintf("workload %s: the description mentions %q", w, word))
}

// infer reads intent out of a free-text description.
func infer(description string) inference {
	var inf inference
	for _, r := range inferRules {
		if m := r.re.FindString(description); m != "" {
			r.apply(&inf, m)
		}
	}
	return inf
}

// stateIntent is the intent-level view of the state section.
type stateIntent struct {
	stores, survives, shared bool
	criticality              string // low, medium, high
}

// contractState is the state section in contract terms.
type contractState struct {
	typ, scope, durability, criticality string
}

// mapState turns intent into contract primitives. Persistence follows
// stores: a service that keeps no data is stateless, local and ephemeral
// whatever the other flags say.
func mapState(si stateIntent, keepType string) contractState {
	cs := contractState{typ: "stateless", scope: "local", durability: "ephemeral", criticality: si.criticality}
	if si.stores {
		cs.typ = "stateful"
		if keepType == "hybrid" {
			cs.typ = "hybrid"
		}
		if si.survives {
			cs.durability = "persistent"
		}
		if si.shared {
			cs.scope = "shared"
		}
	}
	if cs.criticality == "" {
		cs.criticality = "low"
		if si.stores {
			cs.criticality = "medium"
		}
	}
	return cs
}
