package config

// What each deployed function (a folder of functions/) loads: only the
// parts its code uses, so a missing or wrong variable of another function
// cannot stop it, and infra/stacks gives it only these variables and
// secrets (the sweeper never sees the PSP key or the session keys).
type (
	// API serves every /api route but the PSP's webhooks.
	API struct {
		Site
		HTTP
		Database
		Readers
		SearchSnapshots
		Redis
		Sessions
		Passwords
		Admission
		Challenge
		Tickets
		PSP
		Queue
		Mail
		Declines
	}
	// Admit runs the waiting room and publishes the edge's keys.
	Admit struct {
		Database
		Redis
		Sessions
		Admission
		Room
		Edge
	}
	// Sweep releases expired holds and builds the search snapshot.
	Sweep struct {
		Database
		Redis
		SearchSnapshots
	}
	// PSPWebhook applies the PSP's signed webhooks.
	PSPWebhook struct {
		Site
		HTTP
		Database
		Redis
		Tickets
		Webhooks
		Declines
		PSP // each new event is confirmed with the PSP
	}
	// PSPQueue creates queued payments at the PSP.
	PSPQueue struct {
		Site
		Database
		Redis
		PSP
	}
	// Fulfil sends ticket emails and refunds from the outbox.
	Fulfil struct {
		Site
		Database
		Redis
		PSP
		Mail
		Outbox
	}
	// Reconcile replays the PSP's recent events.
	Reconcile struct {
		Database
		Redis
		PSP
		Tickets
		Declines
	}
	// Migrate migrates the catalog and the shards.
	Migrate struct {
		Database
	}
)

// Functions maps each function's name to its configuration.
var Functions = map[string]any{
	"api": API{}, "admit": Admit{}, "sweep": Sweep{}, "pspwebhook": PSPWebhook{},
	"pspqueue": PSPQueue{}, "fulfil": Fulfil{}, "reconcile": Reconcile{}, "migrate": Migrate{},
}

// Owner is the function that runs the migrations: it alone logs in as the
// databases' owner (the clusters' master user).
const Owner = "migrate"

// DBRole is the database role function fn logs in as (migrations create
// them with their grants: catalog 00015, shard 00022).
func DBRole(fn string) string { return "catraca_" + fn }

// DBRoles maps every function but the Owner to its database role.
func DBRoles() map[string]string {
	out := map[string]string{}
	for fn := range Functions {
		if fn != Owner {
			out[fn] = DBRole(fn)
		}
	}
	return out
}
