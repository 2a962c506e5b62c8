package testreq

import "testing"

func TestRequired(t *testing.T) {
	t.Setenv("KBQ_TEST_REQUIRE", "postgres, model")
	if !Required(Postgres) || !Required(Model) || Required(Corpora) {
		t.Error("a list requires what it names, and only that")
	}
	t.Setenv("KBQ_TEST_REQUIRE", "all")
	for _, p := range Parts {
		if !Required(p) || !known(p) {
			t.Errorf("all does not require %s", p)
		}
	}
	t.Setenv("KBQ_TEST_REQUIRE", "")
	if Required(Postgres) {
		t.Error("nothing is required without the variable")
	}
}
