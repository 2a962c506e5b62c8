package membench

// The material of the histories. Every sentence is a template: %[1]s is
// a service of the project, %[2]s a value.

var projectNames = []string{"orion", "kestrel", "basalt", "juniper", "quill", "tundra", "marlin", "cobalt"}

var services = []string{"billing", "gateway", "search", "ingest", "notifier", "auth", "reports", "scheduler", "catalog", "uploads"}

type fact struct {
	name, first, change, question string
	values                        []string
}

var facts = []fact{
	{"port", "The %s service listens on port %s.", "The %s service moved to port %s (it was %s).", "What port does the %s service use?",
		[]string{"8080", "9090", "7070", "8443", "5050"}},
	{"test command", "Run the %s tests with `%s`.", "The %s tests now run with `%s` instead of `%s`.", "What is the current test command for %s?",
		[]string{"make test", "go test ./...", "npm run test:ci", "pytest -q", "just check"}},
	{"staging url", "The %s staging environment is at %s.", "Staging for %s is now %s; %s is gone.", "Where is the %s staging environment?",
		[]string{"https://stage.internal/app", "https://staging-2.internal", "https://pre.example.net", "https://canary.internal"}},
	{"runtime", "%s runs on %s.", "%s was upgraded to %s from %s.", "Which runtime version does %s run on?",
		[]string{"Node 18", "Node 20", "Go 1.22", "Go 1.23", "Python 3.11"}},
	{"database host", "The %s database host is %s.", "The %s database host changed to %s (was %s).", "What is the database host of %s?",
		[]string{"db1.internal", "pg-main.internal", "aurora-east.internal", "db-replica-3.internal"}},
	{"release branch", "%s releases are cut from the %s branch.", "%s releases now come from %s, not %s.", "Which branch are %s releases cut from?",
		[]string{"main", "release", "stable", "trunk"}},
	{"owner", "The %s service is owned by team %s.", "Ownership of %s passed to team %s from %s.", "Which team owns the %s service?",
		[]string{"Atlas", "Beacon", "Cedar", "Delta", "Ember"}},
	{"queue", "%s publishes its events to the %s queue.", "%s publishes to %s now, no longer to %s.", "Which queue does %s publish its events to?",
		[]string{"events-v1", "events-v2", "bus.main", "kafka.orders"}},
	{"timeout", "Requests to %s time out after %s.", "The %s request timeout is %s now (it was %s).", "How long before requests to %s time out?",
		[]string{"5 seconds", "30 seconds", "2 seconds", "10 seconds"}},
}

type decisionT struct {
	subject, first, second, why, whyChange string
}

var decisions = []decisionT{
	{"storage", "PostgreSQL", "CockroachDB", "it is what the team knows", "we need writes in two regions"},
	{"caching", "Redis", "an in-process LRU cache", "several instances share it", "the network hop cost more than the misses"},
	{"feature flags", "environment variables", "LaunchDarkly", "it needs no service", "product wants to flip them without a deploy"},
	{"logging", "plain text logs", "structured JSON logs", "they are easy to read", "the log pipeline indexes fields"},
	{"API style", "REST", "gRPC", "every client speaks HTTP", "the internal callers need streaming"},
	{"deploys", "Heroku", "Kubernetes", "it was quick to start", "the bill grew with the traffic"},
	{"background jobs", "cron on a VM", "a Temporal workflow", "it was simple", "retries and visibility were missing"},
	{"authentication", "session cookies", "OAuth tokens", "the only client was the web app", "mobile clients arrived"},
}

type claim struct {
	subject, text, other, resolution, question string
	values                                     []string
}

var claims = []claim{
	{"nightly job", "The %s nightly job runs at %s.", "No, the %s nightly job runs at %s, not earlier.", "Checked the scheduler: the %s nightly job runs at %s.", "When does the %s nightly job run?",
		[]string{"01:00 UTC", "02:00 UTC", "03:30 UTC", "04:15 UTC"}},
	{"rate limit", "The %s API allows %s per client.", "I measured the %s API limit at %s per client, not what the docs say.", "Confirmed with the vendor: the %s API limit is %s per client.", "What is the rate limit of the %s API?",
		[]string{"100 requests a minute", "600 requests a minute", "50 requests a second", "1000 requests an hour"}},
	{"backup", "%s backups are kept for %s.", "%s backups are kept for %s according to the storage policy.", "Settled: %s backups are kept for %s.", "How long are %s backups kept?",
		[]string{"7 days", "30 days", "90 days", "one year"}},
	{"max payload", "The largest payload %s accepts is %s.", "%s accepts payloads up to %s in practice.", "The %s payload limit is %s, as the load test showed.", "What is the largest payload the %s service accepts?",
		[]string{"1 MB", "4 MB", "10 MB", "256 KB"}},
	{"retries", "%s retries failed calls %s.", "%s actually retries failed calls %s.", "After the incident review: %s retries failed calls %s.", "How many times does %s retry a failed call?",
		[]string{"three times", "five times", "once", "twice with backoff"}},
	{"region", "%s is deployed in %s.", "%s runs in %s, the dashboard shows.", "The infra team confirmed %s lives in %s.", "Which region is %s deployed in?",
		[]string{"eu-west-1", "us-east-1", "ap-south-1", "eu-central-1"}},
	{"on-call", "Pages for %s go to %s.", "Pages for %s go to %s since the rota changed.", "The pager config says %s pages %s.", "Who gets paged for %s?",
		[]string{"the platform rota", "the payments rota", "the SRE rota", "the team lead"}},
	{"cache ttl", "The %s cache keeps entries for %s.", "%s cache entries live %s, judging by the metrics.", "From the config: the %s cache TTL is %s.", "How long does the %s cache keep entries?",
		[]string{"60 seconds", "5 minutes", "one hour", "24 hours"}},
	{"sla", "The %s SLA is %s.", "The contract puts the %s SLA at %s.", "Legal confirmed the %s SLA: %s.", "What is the SLA of %s?",
		[]string{"99.9%", "99.95%", "99.5%", "99.99%"}},
	{"index", "%s search uses the %s index.", "%s queries hit the %s index now.", "The query plan shows %s uses the %s index.", "Which index does %s search use?",
		[]string{"orders_by_date", "orders_by_customer", "events_by_time", "users_by_email"}},
	{"certificate", "The %s certificate expires on %s.", "The %s certificate is valid until %s, the scan says.", "Renewed: the %s certificate now expires on %s.", "When does the %s certificate expire?",
		[]string{"March 3", "June 21", "September 9", "December 1"}},
}

type failure struct {
	problem, tried, why string
}

var failures = []failure{
	{"the memory leak", "raising the container memory limit", "it only delayed the crash by a day"},
	{"the slow cold start", "lazy loading the config", "the first request then timed out"},
	{"the flaky integration test", "adding sleeps", "it still failed one run in ten"},
	{"the duplicate emails", "a unique index on the outbox", "the retries came from the provider, not us"},
	{"the connection storms", "a bigger connection pool", "the database ran out of slots"},
	{"the disk filling up", "a nightly cleanup script", "the logs grew faster than it deleted"},
	{"the stale search results", "shorter cache TTLs", "the load on the index doubled"},
	{"the timezone bug", "converting dates in the browser", "the reports were generated server side"},
}

type constraintT struct {
	rule, question string
}

var constraints = []constraintT{
	{"Never deploy %s on Fridays.", "Can we deploy %s on a Friday?"},
	{"Schema changes to %s need a migration reviewed by two people.", "Can I change the %s schema directly?"},
	{"Do not call the %s admin API from tests; use the fake.", "Can tests call the %s admin API?"},
	{"Secrets for %s live in Vault only, never in environment files.", "Where should %s secrets be stored?"},
	{"%s must stay backwards compatible for one minor version.", "How long must %s stay backwards compatible?"},
	{"Every %s endpoint needs an owner in the catalog before it ships.", "What does a new %s endpoint need before it ships?"},
	{"Load tests against %s run only in the perf environment.", "Where may we load test %s?"},
}

type blocker struct {
	problem, fix string
}

var blockers = []blocker{
	{"the signing key for the mobile build expired", "rotating the key in the release pipeline"},
	{"the license scan flags an unapproved dependency", "replacing it with the approved fork"},
	{"the payment sandbox rejects test cards", "switching to the provider's new test card numbers"},
	{"the migration locks the orders table for minutes", "splitting it into batches"},
	{"the CDN serves stale assets after deploys", "adding content hashes to asset names"},
	{"the staging database is out of disk", "resizing the volume"},
	{"the SSO callback URL is not registered", "registering it with the identity team"},
}

var unknowns = []string{
	"What is the retention policy for %s audit logs?",
	"Which GPU type does the %s training job use?",
	"Who approved the %s budget for next year?",
	"What is the disaster recovery RPO for %s?",
	"Which translation vendor localizes the %s emails?",
	"What colour scheme does the %s dashboard use?",
	"How many customers churned from %s last quarter?",
	"What is the trademark status of the %s name?",
}

var fillers = []string{
	"Paired on the %s dashboards today; nothing to follow up.",
	"The %s standup moved to 10:00 for the %s team.",
	"Reviewed the %s README and fixed typos in the %s wiki.",
	"Cleaned up old branches in the %s repository of %s.",
	"The %s metrics look normal after the weekend for %s.",
	"Updated the %s runbook links in the %s handbook.",
	"Demoed the %s changes to the %s stakeholders.",
	"Renamed a few %s variables for clarity in %s.",
}
