// Drives the test server with Pipedrive's official Node.js client (npm
// "pipedrive", generated from Pipedrive's OpenAPI description): each call
// must be accepted as the client sends it, and each answer must have the
// shape the client's models describe. Run by npmclient_test.go.
const assert = require("node:assert/strict");
const { v1, v2 } = require("pipedrive");

const base = process.env.PD_BASE, token = process.env.PD_TOKEN, tier = process.env.PD_TIER_KEY, budget = process.env.PD_BUDGET_KEY;
const conf2 = new v2.Configuration({ apiKey: token, basePath: base + "/api/v2" });
const conf1 = new v1.Configuration({ apiKey: token, basePath: base + "/v1" });
const persons = new v2.PersonsApi(conf2);
const fields = new v2.PersonFieldsApi(conf2);
const orgs = new v2.OrganizationsApi(conf2);
const recents = new v1.RecentsApi(conf1);
const persons1 = new v1.PersonsApi(conf1);

// refused reports whether the client rejected with Pipedrive's error body
// (the client rejects with the answer's body, success false).
function refused(e, pattern) {
  return e && e.success === false && pattern.test(e.error);
}

function keys(obj, want, what) {
  for (const k of want) assert.ok(k in obj, `${what} lacks ${k}: ${JSON.stringify(obj)}`);
}

async function main() {
  const org = await orgs.addOrganization({ AddOrganizationRequest: { name: "Analytical Engines" } });
  assert.equal(org.success, true);
  const found = await orgs.searchOrganization({ term: "analytical engines", fields: "name", exact_match: true });
  assert.equal(found.data.items[0].item.id, org.data.id);
  const listed = await orgs.getOrganizations({ ids: String(org.data.id) });
  assert.equal(listed.data[0].name, "Analytical Engines");

  const made = [];
  for (const i of [1, 2, 3]) {
    const r = await persons.addPerson({ AddPersonRequest: {
      name: `Ada Lovelace${i}`, org_id: org.data.id,
      emails: [{ value: `ada${i}@example.com`, label: "work", primary: true }, { value: `ada${i}@home.example`, label: "home", primary: false }],
      phones: [{ value: `+1555000${i}`, label: "mobile", primary: true }],
      custom_fields: { [tier]: 1 },
    } });
    assert.equal(r.success, true);
    keys(r.data, ["id", "name", "first_name", "last_name", "owner_id", "org_id", "add_time", "update_time", "emails", "phones", "is_deleted", "visible_to", "custom_fields"], "person");
    assert.equal(r.data.first_name, "Ada");
    assert.equal(r.data.custom_fields[tier], 1);
    // v2 times are RFC 3339 with milliseconds.
    assert.match(r.data.update_time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    made.push(r.data.id);
  }

  // Cursor paging by update_time, two at a time.
  const seen = [];
  let cursor;
  do {
    const page = await persons.getPersons({ updated_since: "2000-01-01T00:00:00Z", sort_by: "update_time", sort_direction: "asc", limit: 2, cursor });
    assert.equal(page.success, true);
    for (const p of page.data) seen.push(p.id);
    cursor = page.additional_data.next_cursor || undefined;
  } while (cursor);
  assert.deepEqual(seen.sort(), [...made].sort());

  const byIds = await persons.getPersons({ ids: made.join(",") });
  assert.equal(byIds.data.length, 3);

  const upd = await persons.updatePerson({ id: made[0], UpdatePersonRequest: {
    name: "Augusta Lovelace",
    emails: [{ value: "ada1@home.example", label: "home", primary: true }, { value: "augusta@example.com", label: "work", primary: false }],
  } });
  assert.equal(upd.data.last_name, "Lovelace");
  assert.equal(upd.data.emails.length, 2);

  // v2 is strict: a string where a number belongs is refused.
  await assert.rejects(persons.updatePerson({ id: made[0], UpdatePersonRequest: { custom_fields: { [tier]: "1" } } }), (e) => refused(e, /must be an integer/));

  // A monetary field is an object of the amount and its currency; a bare
  // number (API v1's shape) is refused.
  const paid = await persons.updatePerson({ id: made[1], UpdatePersonRequest: { custom_fields: { [budget]: { value: 4321, currency: "EUR" } } } });
  assert.deepEqual(paid.data.custom_fields[budget], { value: 4321, currency: "EUR" });
  await assert.rejects(persons.updatePerson({ id: made[1], UpdatePersonRequest: { custom_fields: { [budget]: 4321 } } }), (e) => refused(e, /must be an object/));

  // Merging (API v1): the person of the path goes, merge_with_id stays and
  // carries merge_what_id.
  const extra = await persons.addPerson({ AddPersonRequest: { name: "Ada Duplicate", emails: [{ value: "dup@example.com", label: "other", primary: true }] } });
  const merged = await persons1.mergePersons({ id: extra.data.id, MergePersonsRequest: { merge_with_id: made[1] } });
  assert.equal(merged.success, true);
  assert.equal(merged.data.id, made[1]);
  assert.equal(merged.data.merge_what_id, extra.data.id);
  await assert.rejects(persons.getPerson({ id: extra.data.id }), (e) => refused(e, /not found/));

  const gone = await persons.deletePerson({ id: made[2] });
  assert.equal(gone.data.id, made[2]);
  await assert.rejects(persons.getPerson({ id: made[2] }), (e) => refused(e, /not found/));

  const defs = await fields.getPersonFields({ limit: 500 });
  const t = defs.data.find((f) => f.field_code === tier);
  keys(t, ["field_name", "field_code", "field_type", "is_custom_field", "options"], "person field");
  assert.equal(t.field_name, "Tier");

  const rec = await recents.getRecents({ since_timestamp: "2000-01-01 00:00:00", items: "person", start: 0, limit: 100 });
  assert.equal(rec.success, true);
  keys(rec.additional_data, ["since_timestamp", "last_timestamp_on_page", "pagination"], "recents additional_data");
  const deleted = rec.data.find((e) => e.id === made[2]);
  assert.equal(deleted.item, "person");
  assert.equal(deleted.data.active_flag, false);

  // Activities (API v2) on a person, its primary participant; activity
  // types and users (API v1).
  const activities = new v2.ActivitiesApi(conf2);
  const types = new v1.ActivityTypesApi(conf1);
  const users = new v1.UsersApi(conf1);
  const all = await types.getActivityTypes();
  keys(all.data[0], ["id", "name", "key_string", "icon_key", "active_flag", "is_custom_flag", "order_nr"], "activity type");
  assert.ok(all.data.some((x) => x.key_string === "call"));
  const sms = await types.addActivityType({ AddActivityTypeRequest: { name: "Text message", icon_key: "bubble" } });
  assert.equal(sms.data.key_string, "text_message");
  const rep = await users.findUsersByName({ term: "rep@example.com", search_by_email: 1 });
  assert.equal(rep.data[0].email, "rep@example.com");
  const act = await activities.addActivity({ AddActivityRequest: {
    subject: "Call to +15551230000", type: "call", owner_id: rep.data[0].id, participants: [{ person_id: made[0], primary: true }],
    due_date: "2026-03-02", due_time: "23:30", duration: "00:03", done: true, note: "<p>Summary</p>",
  } });
  keys(act.data, ["id", "subject", "type", "owner_id", "person_id", "due_date", "due_time", "duration", "done", "participants", "note", "add_time", "update_time"], "activity");
  assert.equal(act.data.person_id, made[0]);
  assert.equal(act.data.done, true);
  await assert.rejects(activities.addActivity({ AddActivityRequest: { subject: "x", type: "call", person_id: made[0] } }), (e) => refused(e, /read-only/));
  await assert.rejects(activities.addActivity({ AddActivityRequest: { subject: "x", type: "sms" } }), (e) => refused(e, /activity type/));
  await assert.rejects(activities.addActivity({ AddActivityRequest: { subject: "x", type: "call", duration: "125" } }), (e) => refused(e, /HH:MM/));
  const upd2 = await activities.updateActivity({ id: act.data.id, AddActivityRequest: { note: "<p>Summary</p><p>Next</p>" } });
  assert.equal(upd2.data.note, "<p>Summary</p><p>Next</p>");
  const onPerson = await activities.getActivities({ person_id: made[0], sort_by: "add_time", sort_direction: "desc", limit: 100 });
  assert.equal(onPerson.data.length, 1);
  assert.equal(onPerson.data[0].id, act.data.id);
  const one = await activities.getActivity({ id: act.data.id });
  assert.equal(one.data.type, "call");
  console.log(`ok: ${made.length} persons, ${seen.length} read by cursor, recents ${rec.data.length} items, activity ${act.data.id}`);
}

main().catch((e) => {
  console.error(e.response ? `${e.response.status} ${JSON.stringify(e.response.data)}` : e);
  process.exit(1);
});
