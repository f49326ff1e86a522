package discover

import (
	"regexp"
	"strings"
)

// An export is the header a program writes when it exports contacts to
// a CSV file: recognised by the columns it always writes (Signature), it
// says what each of its columns holds, so that init maps it as the
// program means it (Outlook's Title is the courtesy title, Salesforce's
// the job title). Each entry names where its header comes from; adding
// an exporter is adding one entry.
type export struct {
	// Name is the program and form: "Google Contacts (Google CSV)".
	Name string
	// Source is where the header was checked.
	Source string
	// Signature are columns every such file has.
	Signature []string
	// Columns say what the columns hold; "#" in a name stands for a
	// number (E-mail 1 - Value, E-mail 2 - Value...).
	Columns []exportColumn
	// Separator is what the program puts between several values in one
	// cell, "" for none.
	Separator string
}

// exportColumn is one column of an export.
type exportColumn struct {
	Name string
	// Hint is what the column holds: a target (firstName, lastName,
	// company, role), "email" or "phone" (with ":label" when the column
	// tells it), "id" (the program's record id), "custom:<what>" (mapped
	// to a custom field named so when the workspace has one), or
	// "skip:<why>".
	Hint string
	// LabelFrom is the column holding each row's label for this one's
	// value ("E-mail # - Label").
	LabelFrom string
}

const courtesy = "skip:the courtesy title (Mr., Dr.), not the job title"

// exports are the exporters init recognises.
var exports = []export{
	{
		Name:      "Google Contacts (Google CSV)",
		Source:    "the Google CSV Google Contacts exports (contacts.google.com, Export, Google CSV), columns as listed by support.google.com/contacts/answer/1069522 and pinned by the public converters that write it",
		Signature: []string{"First Name", "Last Name", "Organization Name"},
		Separator: " ::: ",
		Columns: []exportColumn{
			{Name: "First Name", Hint: "firstName"}, {Name: "Last Name", Hint: "lastName"},
			{Name: "Middle Name", Hint: "skip:a middle name"}, {Name: "Name Prefix", Hint: courtesy}, {Name: "Name Suffix", Hint: "skip:a name suffix"},
			{Name: "Phonetic First Name", Hint: "skip:how the name is said"}, {Name: "Phonetic Middle Name", Hint: "skip:how the name is said"}, {Name: "Phonetic Last Name", Hint: "skip:how the name is said"},
			{Name: "Nickname", Hint: "skip:a nickname"}, {Name: "File As", Hint: "skip:the name to sort by"},
			{Name: "Organization Name", Hint: "company"}, {Name: "Organization Title", Hint: "role"}, {Name: "Organization Department", Hint: "skip:a department"},
			{Name: "E-mail # - Value", Hint: "email", LabelFrom: "E-mail # - Label"},
			{Name: "Phone # - Value", Hint: "phone", LabelFrom: "Phone # - Label"},
			{Name: "Notes", Hint: "custom:notes"}, {Name: "Labels", Hint: "custom:labels"},
		},
	},
	{
		Name:      "Google Contacts (older Google CSV)",
		Source:    "the Google CSV Google Contacts exported before 2023 (Given Name, Family Name, Group Membership, \"E-mail 1 - Type\"), as public code that reads and writes it pins it",
		Signature: []string{"Given Name", "Family Name", "Group Membership"},
		Separator: " ::: ",
		Columns: []exportColumn{
			{Name: "Name", Hint: "skip:the whole name; Given Name and Family Name are mapped"},
			{Name: "Given Name", Hint: "firstName"}, {Name: "Family Name", Hint: "lastName"}, {Name: "Additional Name", Hint: "skip:a middle name"},
			{Name: "Name Prefix", Hint: courtesy}, {Name: "Name Suffix", Hint: "skip:a name suffix"},
			{Name: "Organization 1 - Name", Hint: "company"}, {Name: "Organization 1 - Title", Hint: "role"},
			{Name: "Organization 1 - Type", Hint: "skip:the organization's label"}, {Name: "Organization 1 - Department", Hint: "skip:a department"},
			{Name: "E-mail # - Value", Hint: "email", LabelFrom: "E-mail # - Type"},
			{Name: "Phone # - Value", Hint: "phone", LabelFrom: "Phone # - Type"},
			{Name: "Notes", Hint: "custom:notes"}, {Name: "Group Membership", Hint: "custom:labels"},
		},
	},
	{
		Name:      "Outlook (CSV)",
		Source:    "Outlook's CSV export (File, Open & Export, Export to a file), columns as Microsoft lists them in \"Create or edit .csv files to import into Outlook\" (support.microsoft.com) and michalbe/csv2vcard pins them",
		Signature: []string{"First Name", "Last Name", "Job Title", "E-mail Address"},
		Columns: []exportColumn{
			{Name: "Title", Hint: courtesy}, {Name: "First Name", Hint: "firstName"}, {Name: "Middle Name", Hint: "skip:a middle name"},
			{Name: "Last Name", Hint: "lastName"}, {Name: "Suffix", Hint: "skip:a name suffix"},
			{Name: "Company", Hint: "company"}, {Name: "Department", Hint: "skip:a department"}, {Name: "Job Title", Hint: "role"},
			{Name: "E-mail Address", Hint: "email:work"}, {Name: "E-mail 2 Address", Hint: "email:home"}, {Name: "E-mail 3 Address", Hint: "email:other"},
			{Name: "E-mail Type", Hint: "skip:the address type (SMTP), not a label"}, {Name: "E-mail 2 Type", Hint: "skip:the address type (SMTP), not a label"}, {Name: "E-mail 3 Type", Hint: "skip:the address type (SMTP), not a label"},
			{Name: "E-mail Display Name", Hint: "skip:the name shown with the address"}, {Name: "E-mail 2 Display Name", Hint: "skip:the name shown with the address"}, {Name: "E-mail 3 Display Name", Hint: "skip:the name shown with the address"},
			{Name: "Business Phone", Hint: "phone:work"}, {Name: "Business Phone 2", Hint: "phone:work"}, {Name: "Home Phone", Hint: "phone:home"}, {Name: "Home Phone 2", Hint: "phone:home"},
			{Name: "Mobile Phone", Hint: "phone:mobile"}, {Name: "Other Phone", Hint: "phone:other"}, {Name: "Primary Phone", Hint: "phone:main"}, {Name: "Company Main Phone", Hint: "phone:company"},
			{Name: "Assistant's Phone", Hint: "skip:the assistant's number"}, {Name: "Car Phone", Hint: "phone:car"}, {Name: "Callback", Hint: "skip:a callback number"},
			{Name: "Pager", Hint: "skip:a pager"}, {Name: "ISDN", Hint: "skip:an ISDN line"}, {Name: "Radio Phone", Hint: "skip:a radio phone"}, {Name: "TTY/TDD Phone", Hint: "skip:a text telephone"}, {Name: "Telex", Hint: "skip:a telex"},
			{Name: "Notes", Hint: "custom:notes"}, {Name: "Categories", Hint: "custom:labels"},
		},
	},
	{
		Name:      "HubSpot (contacts export)",
		Source:    "HubSpot's contacts export (Contacts, Export), whose columns are the properties' labels: \"Record ID\", \"First Name\", \"Email\", \"Phone Number\", \"Mobile Phone Number\", \"Job Title\", \"Company Name\", \"Contact owner\"",
		Signature: []string{"Record ID", "First Name", "Last Name"},
		Columns: []exportColumn{
			{Name: "Record ID", Hint: "id"}, {Name: "First Name", Hint: "firstName"}, {Name: "Last Name", Hint: "lastName"},
			{Name: "Salutation", Hint: courtesy}, {Name: "Job Title", Hint: "role"}, {Name: "Company Name", Hint: "company"},
			{Name: "Email", Hint: "email:work"}, {Name: "Additional email addresses", Hint: "email:other"},
			{Name: "Phone Number", Hint: "phone:work"}, {Name: "Mobile Phone Number", Hint: "phone:mobile"}, {Name: "Fax Number", Hint: "skip:a fax number"},
		},
		Separator: ";",
	},
	{
		Name:      "Salesforce (Data Loader or weekly data export of Contact)",
		Source:    "the Contact object's field API names, which Data Loader and Setup's Data Export write as the header (Salesforce Object Reference: Contact)",
		Signature: []string{"Id", "FirstName", "LastName"},
		Columns: []exportColumn{
			{Name: "Id", Hint: "id"}, {Name: "Salutation", Hint: courtesy}, {Name: "FirstName", Hint: "firstName"}, {Name: "LastName", Hint: "lastName"},
			{Name: "Title", Hint: "role"}, {Name: "Account.Name", Hint: "company"}, {Name: "AccountId", Hint: "skip:the account's record id; export Account.Name for the company"},
			{Name: "Email", Hint: "email:work"}, {Name: "Phone", Hint: "phone:work"}, {Name: "MobilePhone", Hint: "phone:mobile"},
			{Name: "HomePhone", Hint: "phone:home"}, {Name: "OtherPhone", Hint: "phone:other"}, {Name: "AssistantPhone", Hint: "skip:the assistant's number"}, {Name: "Fax", Hint: "skip:a fax number"},
			{Name: "Name", Hint: "skip:the whole name; FirstName and LastName are mapped"}, {Name: "Description", Hint: "custom:notes"},
		},
	},
	{
		Name:      "Salesforce (report export)",
		Source:    "a Salesforce contacts report exported as CSV, whose columns are the fields' labels (Contact ID, Salutation, First Name, Last Name, Title, Account Name, Email, Phone, Mobile)",
		Signature: []string{"Contact ID", "First Name", "Last Name", "Account Name"},
		Columns: []exportColumn{
			{Name: "Contact ID", Hint: "id"}, {Name: "Salutation", Hint: courtesy}, {Name: "First Name", Hint: "firstName"}, {Name: "Last Name", Hint: "lastName"},
			{Name: "Title", Hint: "role"}, {Name: "Account Name", Hint: "company"}, {Name: "Email", Hint: "email:work"},
			{Name: "Phone", Hint: "phone:work"}, {Name: "Mobile", Hint: "phone:mobile"}, {Name: "Home Phone", Hint: "phone:home"}, {Name: "Other Phone", Hint: "phone:other"},
			{Name: "Fax", Hint: "skip:a fax number"}, {Name: "Description", Hint: "custom:notes"},
		},
	},
	{
		Name:      "Pipedrive (people export)",
		Source:    "Pipedrive's people export (Contacts, People, Export), whose columns are \"Person - <field>\" with one column per e-mail and phone label, as public code that reads it pins them",
		Signature: []string{"Person - Name"},
		Separator: ", ",
		Columns: []exportColumn{
			{Name: "Person - ID", Hint: "id"}, {Name: "Person - Name", Hint: "skip:the whole name; first and last name are mapped"},
			{Name: "Person - First name", Hint: "firstName"}, {Name: "Person - Last name", Hint: "lastName"},
			{Name: "Person - Organization", Hint: "company"}, {Name: "Person - Job title", Hint: "role"},
			{Name: "Person - Email - Work", Hint: "email:work"}, {Name: "Person - Email - Home", Hint: "email:home"}, {Name: "Person - Email - Other", Hint: "email:other"},
			{Name: "Person - Phone - Work", Hint: "phone:work"}, {Name: "Person - Phone - Home", Hint: "phone:home"}, {Name: "Person - Phone - Mobile", Hint: "phone:mobile"}, {Name: "Person - Phone - Other", Hint: "phone:other"},
			{Name: "Person - Labels", Hint: "custom:labels"}, {Name: "Person - Label", Hint: "custom:labels"},
		},
	},
	{
		Name:      "Zoho CRM (contacts export)",
		Source:    "Zoho CRM's contacts export (Setup, Data Administration, Export), whose columns are the fields' labels: Record Id, Contact Owner, Salutation, First Name, Last Name, Account Name, Title, Email, Secondary Email, Phone, Mobile, Home Phone, Other Phone",
		Signature: []string{"Record Id", "First Name", "Last Name", "Account Name"},
		Columns: []exportColumn{
			{Name: "Record Id", Hint: "id"}, {Name: "Salutation", Hint: courtesy}, {Name: "First Name", Hint: "firstName"}, {Name: "Last Name", Hint: "lastName"},
			{Name: "Account Name", Hint: "company"}, {Name: "Title", Hint: "role"},
			{Name: "Email", Hint: "email:work"}, {Name: "Secondary Email", Hint: "email:other"},
			{Name: "Phone", Hint: "phone:work"}, {Name: "Mobile", Hint: "phone:mobile"}, {Name: "Home Phone", Hint: "phone:home"}, {Name: "Other Phone", Hint: "phone:other"},
			{Name: "Asst Phone", Hint: "skip:the assistant's number"}, {Name: "Fax", Hint: "skip:a fax number"},
			{Name: "Description", Hint: "custom:notes"}, {Name: "Tag", Hint: "custom:labels"},
		},
	},
	{
		Name:      "vCard-derived CSV (Apple Contacts and others, through a vCard to CSV converter)",
		Source:    "vCard's property names (RFC 6350: FN, N, ORG, TITLE, ROLE, EMAIL, TEL, NOTE, CATEGORIES), with the TYPE parameter naming the label, as vCard to CSV converters write them",
		Signature: []string{"FN", "ORG"},
		Separator: ";",
		Columns: []exportColumn{
			{Name: "FN", Hint: "skip:the whole name; the name's parts are mapped"}, {Name: "N", Hint: "skip:the structured name"},
			{Name: "N.given", Hint: "firstName"}, {Name: "N.family", Hint: "lastName"}, {Name: "N.prefix", Hint: courtesy},
			{Name: "ORG", Hint: "company"}, {Name: "TITLE", Hint: "role"}, {Name: "ROLE", Hint: "skip:the function, TITLE is the job title"},
			{Name: "EMAIL", Hint: "email:other"}, {Name: "EMAIL;TYPE=work", Hint: "email:work"}, {Name: "EMAIL;TYPE=home", Hint: "email:home"},
			{Name: "TEL", Hint: "phone:other"}, {Name: "TEL;TYPE=work", Hint: "phone:work"}, {Name: "TEL;TYPE=home", Hint: "phone:home"}, {Name: "TEL;TYPE=cell", Hint: "phone:mobile"},
			{Name: "NOTE", Hint: "custom:notes"}, {Name: "CATEGORIES", Hint: "custom:labels"}, {Name: "UID", Hint: "id"},
		},
	},
}

// recognise finds the export a header is, nil for none.
func recognise(header []string) *export {
	have := map[string]bool{}
	for _, h := range header {
		have[h] = true
	}
	for i := range exports {
		e := &exports[i]
		all := true
		for _, s := range e.Signature {
			all = all && have[s]
		}
		if all {
			return e
		}
	}
	return nil
}

// column returns what the export says of a column, and, for a numbered
// one, the name of its label column.
func (e *export) column(name string) (exportColumn, bool) {
	for _, c := range e.Columns {
		if !strings.Contains(c.Name, "#") {
			if strings.EqualFold(c.Name, name) {
				return c, true
			}
			continue
		}
		re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(c.Name), "#", "([0-9]+)") + "$")
		if m := re.FindStringSubmatch(name); m != nil {
			out := c
			out.Name = name
			out.LabelFrom = strings.ReplaceAll(c.LabelFrom, "#", m[1])
			return out, true
		}
	}
	return exportColumn{}, false
}
