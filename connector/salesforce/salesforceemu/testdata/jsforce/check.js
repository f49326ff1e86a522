// Runs the jsforce client (Salesforce's most used JavaScript library)
// against a salesforceemu org, to check that the test org's answers have
// the shapes a real client expects. Started by jsforce_test.go with the
// org's addresses in the environment; prints one JSON line of findings.
const jsforce = require('jsforce');

async function main() {
  const conn = new jsforce.Connection({
    oauth2: { loginUrl: process.env.SF_LOGIN_URL, clientId: process.env.SF_CLIENT_ID, clientSecret: process.env.SF_CLIENT_SECRET },
    version: '62.0',
  });
  const out = {};
  const tok = await conn.authorize({ grant_type: 'client_credentials' });
  out.instanceUrl = conn.instanceUrl;
  out.userInfo = tok && tok.organizationId ? 'ok' : JSON.stringify(tok);

  const desc = await conn.sobject('Contact').describe();
  out.describeFields = desc.fields.length;
  out.lastNameNillable = desc.fields.find((f) => f.name === 'LastName').nillable;

  const soql = 'SELECT Id, LastName, SystemModstamp, IsDeleted, MasterRecordId FROM Contact ORDER BY SystemModstamp ASC, Id ASC';
  const all = await conn.query(soql).run({ autoFetch: true, maxFetch: 100000 });
  out.queryAllPagesRecords = all.records.length;
  out.queryTotalSize = all.totalSize;
  const withDeleted = await conn.query(soql, { scanAll: true }).run({ autoFetch: true, maxFetch: 100000 });
  out.scanAllRecords = withDeleted.records.length;
  out.merged = withDeleted.records.filter((r) => r.MasterRecordId).length;

  const created = await conn.sobject('Contact').create(
    [{ LastName: 'From jsforce' }, { FirstName: 'No last name' }], { allOrNone: false });
  out.createSuccess = created.map((r) => r.success);
  out.createError = created[1].errors && created[1].errors[0] && (created[1].errors[0].statusCode || created[1].errors[0].errorCode);
  const newId = created[0].id;
  const updated = await conn.sobject('Contact').update([{ Id: newId, Title: 'CTO' }], { allOrNone: false });
  out.updateSuccess = updated.map((r) => r.success);
  const destroyed = await conn.sobject('Contact').destroy([newId], { allOrNone: false });
  out.destroySuccess = destroyed.map((r) => r.success);

  const end = new Date(Date.parse(process.env.SF_NOW));
  const start = new Date(end.getTime() - 10 * 60 * 1000);
  const del = await conn.sobject('Contact').deleted(start, end);
  out.deletedRecords = del.deletedRecords.length;
  out.earliestDateAvailable = !!del.earliestDateAvailable;
  const upd = await conn.sobject('Contact').updated(start, end);
  out.updatedIds = upd.ids.length;
  out.limitInfo = conn.limitInfo;
  // 61 s apart from a whole minute: one minute once the seconds are
  // ignored, which getDeleted refuses.
  const minute = new Date(Math.floor(start.getTime() / 60000) * 60000);
  try {
    await conn.sobject('Contact').deleted(minute, new Date(minute.getTime() + 61 * 1000));
    out.shortRangeError = 'none';
  } catch (e) {
    out.shortRangeError = e.errorCode || e.name;
  }
  const validated = await conn.sobject('Contact').create(
    [{ LastName: 'Rule', Title: 'Forbidden' }, { LastName: 'Fine' }], { allOrNone: false });
  out.ruleSuccess = validated.map((r) => r.success);
  const ruleErr = validated[0].errors && validated[0].errors[0];
  out.ruleError = ruleErr ? [ruleErr.statusCode || ruleErr.errorCode, ruleErr.message, (ruleErr.fields || []).join(',')] : [];

  // A call and a text as Tasks on a Contact, the owner found by e-mail;
  // read back by the key in CallObject.
  const who = process.env.SF_TASK_CONTACT;
  const owner = await conn.query("SELECT Id FROM User WHERE Email = 'rep@example.com' AND IsActive = true LIMIT 1");
  const tasks = await conn.sobject('Task').create([
    { WhoId: who, OwnerId: owner.records[0].Id, Subject: 'Call from +15551230000', Status: 'Completed', TaskSubtype: 'Call',
      CallType: 'Inbound', CallDurationInSeconds: 125, CallDisposition: 'completed', ActivityDate: '2026-03-02', CallObject: 'call:AC1' },
    { WhoId: who, Subject: 'Text to +15551230000', Status: 'Completed', TaskSubtype: 'Task', CallObject: 'message:M1', Description: 'See you' },
    { WhoId: who, Subject: 'Bad', TaskSubtype: 'SMS' },
  ], { allOrNone: false });
  out.taskSuccess = tasks.map((r) => r.success);
  out.taskError = tasks[2].errors && tasks[2].errors[0] && (tasks[2].errors[0].statusCode || tasks[2].errors[0].errorCode);
  const found = await conn.query("SELECT Id, TaskSubtype, CallType, CallDurationInSeconds, OwnerId, WhoId FROM Task WHERE CallObject = 'call:AC1' AND WhoId = '" + who + "'");
  const t = found.records[0] || {};
  out.task = [found.totalSize, t.TaskSubtype, t.CallType, t.CallDurationInSeconds, t.OwnerId === owner.records[0].Id, t.WhoId === who];

  try {
    await conn.query('SELECT Id FROM Contact WHERE Bogus__c = 1');
  } catch (e) {
    out.badQueryError = e.errorCode || e.name;
  }
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e && (e.stack || e)); process.exit(1); });
