// Package demo seeds the local stack with a believable on-sale: a stadium
// with 20,000+ numbered seats and a standing floor, an arena in a second
// city, several events (one on sale now behind the waiting room) and demo
// accounts. Seeding is idempotent.
package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/catraca/catraca/shared/account"
	"github.com/catraca/catraca/shared/account/pgstore"
	"github.com/catraca/catraca/shared/event"
	"github.com/catraca/catraca/shared/organizer"
	"github.com/catraca/catraca/shared/venue"
)

// Demo credentials printed by make dev.
const (
	FanEmail       = "fan@catraca.dev"
	OrganizerEmail = "organizer@catraca.dev"
	Password       = "catraca-demo-2026"
)

// Result says what the seed holds.
type Result struct {
	Created bool
	OnSale  int64 // the event on sale now with the waiting room on
}

// Seed fills an empty catalog; on a seeded one it only reports.
func Seed(ctx context.Context, accounts *account.Service, store *pgstore.Store, org *organizer.Service, events *event.Directory) (Result, error) {
	if _, err := accounts.LogIn(ctx, OrganizerEmail, Password); err == nil {
		page, err := events.List(ctx, event.Filter{Limit: 100})
		if err != nil {
			return Result{}, err
		}
		for _, e := range page.Events {
			if e.WaitingRoom.Enabled && e.OnSale(time.Now()) {
				return Result{OnSale: e.ID}, nil
			}
		}
		return Result{}, nil
	} else if !errors.Is(err, account.ErrInvalidCredentials) {
		return Result{}, err
	}
	orgAcc, err := accounts.SignUp(ctx, OrganizerEmail, Password, "Demo Organizer")
	if err != nil {
		return Result{}, fmt.Errorf("seed organizer: %w", err)
	}
	if err := store.SetRole(ctx, orgAcc.ID, account.RoleOrganizer); err != nil {
		return Result{}, err
	}
	if _, err := accounts.SignUp(ctx, FanEmail, Password, "Demo Fan"); err != nil {
		return Result{}, fmt.Errorf("seed fan: %w", err)
	}
	// The organizer's own venues: the console lists them.
	stadium, err := org.ImportLayoutAs(ctx, orgAcc.ID, 0, venue.Stadium("Estádio do Maracanã", "Rio de Janeiro", 20000, 5000))
	if err != nil {
		return Result{}, fmt.Errorf("seed stadium: %w", err)
	}
	arena, err := org.ImportLayoutAs(ctx, orgAcc.ID, 0, venue.Stadium("Allianz Parque", "São Paulo", 3000, 1500))
	if err != nil {
		return Result{}, fmt.Errorf("seed arena: %w", err)
	}
	now := time.Now().UTC().Truncate(time.Minute)
	day := 24 * time.Hour
	prices := []event.PriceLevel{
		{Code: "A", Name: "Lower central", PriceCents: 45000},
		{Code: "B", Name: "Lower side", PriceCents: 32000},
		{Code: "C", Name: "Upper", PriceCents: 18000},
		{Code: "GA", Name: "Floor", PriceCents: 25000},
	}
	opens := now.Add(-time.Hour)
	specs := []organizer.EventSpec{
		{VenueID: stadium.VenueID, LayoutVersion: stadium.Version, Name: "Aurora Tour — Rio de Janeiro", Category: "music",
			Description: "The stadium tour everyone wants, on sale now.", StartsAt: now.Add(30 * day),
			SaleStartsAt: now.Add(-10 * time.Minute), SaleEndsAt: now.Add(30 * day),
			WaitingRoom: event.WaitingRoom{Enabled: true, PrequeueOpensAt: &opens, Ceiling: 200, ActiveTTL: 600, AdmissionTTL: 900}},
		{VenueID: stadium.VenueID, LayoutVersion: stadium.Version, Name: "Flamengo x Fluminense", Category: "sports",
			Description: "Clássico at the Maracanã.", StartsAt: now.Add(12 * day), SaleStartsAt: now.Add(-2 * day), SaleEndsAt: now.Add(12 * day)},
		{VenueID: arena.VenueID, LayoutVersion: arena.Version, Name: "Aurora Tour — São Paulo", Category: "music",
			Description: "Second date of the tour; sales open next week.", StartsAt: now.Add(37 * day),
			SaleStartsAt: now.Add(7 * day), SaleEndsAt: now.Add(37 * day),
			WaitingRoom: event.WaitingRoom{Enabled: true, Ceiling: 100}},
		{VenueID: arena.VenueID, LayoutVersion: arena.Version, Name: "Orquestra Sinfônica: Villa-Lobos", Category: "classical",
			Description: "Bachianas Brasileiras under the stars.", StartsAt: now.Add(20 * day), SaleStartsAt: now.Add(-5 * day), SaleEndsAt: now.Add(20 * day)},
		{VenueID: arena.VenueID, LayoutVersion: arena.Version, Name: "Stand-up Night São Paulo", Category: "comedy",
			Description: "An evening of comedy.", StartsAt: now.Add(5 * day), SaleStartsAt: now.Add(-day), SaleEndsAt: now.Add(5 * day)},
	}
	res := Result{Created: true}
	for i, spec := range specs {
		spec.PriceLevels = prices
		e, err := org.CreateEvent(ctx, orgAcc.ID, spec)
		if err != nil {
			return Result{}, fmt.Errorf("seed event %q: %w", spec.Name, err)
		}
		if spec.SaleStartsAt.Before(now) {
			if err := org.SetStatus(ctx, e.ID, "on_sale"); err != nil {
				return Result{}, err
			}
		}
		if i == 0 {
			res.OnSale = e.ID
		}
	}
	return res, nil
}
