"""Sensitive categories (rule 8): health, finance, credentials, government ids, location ... A
write that names one waits for a reviewer.
"""

from __future__ import annotations

import re

from memory_core.admission.guards.vocabulary import W, rx, words
from memory_core.admission.prefilter import trie_source

# Prescription medicines by name, generic and brand: "takes sertraline" says as much about a
# person's health as "takes an antidepressant". Common prescriptions only; over-the-counter
# painkillers (ibuprofen, paracetamol) and words with an everyday sense (lithium) are left
# out, so a headache or a battery does not wait for a reviewer.
MEDICINES = (
    "abilify adalimumab adderall albuterol alprazolam amitriptyline amlodipine amoxicillin "
    "apixaban aripiprazole atenolol atorvastatin azithromycin biktarvy bupropion buspirone "
    "carbamazepine carvedilol cephalexin cialis ciprofloxacin citalopram clonazepam clopidogrel "
    "clozapine concerta crestor cyclobenzaprine depakote descovy diazepam doxycycline duloxetine "
    "eliquis empagliflozin escitalopram esomeprazole estradiol finasteride fluconazole fluoxetine "
    "fluticasone furosemide gabapentin glipizide humalog humira hydrochlorothiazide hydrocodone "
    "hydroxychloroquine hydroxyzine isotretinoin januvia jardiance keppra lamictal lamotrigine "
    "lantus levetiracetam levothyroxine lexapro lipitor lisinopril lorazepam losartan metoprolol "
    "methadone methotrexate methylphenidate mirtazapine modafinil montelukast morphine mounjaro "
    "naltrexone olanzapine omeprazole ondansetron oxycodone ozempic pantoprazole paroxetine "
    "plavix prednisone pregabalin propranolol prozac quetiapine risperidone ritalin rivaroxaban "
    "rosuvastatin semaglutide seroquel sertraline sildenafil simvastatin sitagliptin "
    "spironolactone strattera suboxone synthroid tacrolimus tadalafil tamsulosin tegretol "
    "tirzepatide topiramate tramadol trazodone truvada valacyclovir valproate venlafaxine "
    "viagra vyvanse warfarin wegovy wellbutrin xanax xarelto zoloft zolpidem"
).split()

# "The password of/for X is ...", in the guards' languages: the words between a credential
# and its value. Italian elides "dello" before a vowel: "La password dell'utente è ..." was
# stored (stop 60's audit of admission).
CREDENTIAL_OF = (
    r"(?:for|to|of|on|at|de|del|du|des|da|do|di|della|dello|dell|von|vom|fur|zu|para|pour|per)"
)
CREDENTIAL_IS = r"(?:is|was|es|era|est|etait|ist|lautet|heisst|war|e|sera|c'est|sono|son|sont|sind)"
# A credential's key over an object, read with the keys below it as a value's line reads a
# path: {"user": {"password": {"history": {"current": "..."}}}} is "user password history:
# current: ..." (stored personal where one object less waited: stop 58's audit of
# admission). One or two words, then a key of the object with its own colon: "password
# manager: 1password" is no credential.
NESTED_KEYS = r"(?: [\w'-]+){1,2}(?=:\W{0,3}[\w'-]+:)"
# "Medicine" as a field of study or work is no one's health: "User studies medicine at
# university" waited for a reviewer (stop 61's audit of admission), where "User takes
# medicine for ..." must. So is a branch of it, whatever the verb before ("practices
# veterinary medicine", "studies internal medicine": stop 61's review of its vocabulary fix);
# a branch that is also taken ("herbal", "traditional") is left out. Python's look-behinds
# are of fixed width: one per field, each read once "medicine" has matched.
_MEDICINE_AS_A_FIELD = (
    "study", "studies", "studied", "studying", "practice", "practices", "practiced",
    "practised", "practicing", "practising", "teaches", "taught", "teaching", "in",
    "school of", "faculty of", "doctor of", "degree in", "professor of", "lecturer in",
    "student of", "career in", "residency in",
    "veterinary", "internal", "sports", "family", "emergency", "preventive", "nuclear",
    "tropical", "occupational", "forensic", "aerospace", "pediatric", "paediatric",
    "geriatric", "palliative", "clinical", "academic", "osteopathic", "military",
)  # fmt: skip
_MEDICINE_AS_CARE = "medicine" + "".join(
    rf"(?<!\b{field} medicine)" for field in _MEDICINE_AS_A_FIELD
)
# "no" as an id's abbreviation only with its dot or a number after it: "Her social insurance
# no longer pays for glasses" waited as a government id (stop 61's last review).
_NO = r"no(?=\.|\W{0,3}\d)"
# Who a special category's fact is about, as its subject: "User is of Roma descent", not
# "User's dog is of Labrador descent".
_PERSON = r"(?:user|he|she|i|they)"
# Trades whose union a membership names ("a member of the teachers' union"), not the chess
# union or a student union.
_TRADES = (
    r"(?:teachers?|nurses?|workers?|employees?|staff|doctors?|physicians?|pilots?|drivers?|"
    r"miners?|dockers?|dockworkers?|actors?|writers?|musicians?|electricians?|carpenters?|"
    r"firefighters?|police|postal|transit|transport|farm ?workers?|autoworkers?|steelworkers?|"
    r"teamsters?|journalists?|academics?|lecturers?|civil servants?)"
)

# Where a person sleeps away from home, by its kind or a chain's name: a room's number there
# says where to find them ("the Hilton on 5th Avenue, room 1204"). An inn or a lodge too, but
# not a club's lodge that meets ("User's Elks Lodge meets in room 4") nor the verb ("lodge a
# complaint"): dropped whole by stop 65's review of its admission fixes, "User is staying at
# the Lakeside Inn, room 12" was stored until that review's audit.
_LODGING = (
    r"(?:hotel|hostel|motel|resort|suites|b&b|airbnb|hilton|marriott|hyatt|sheraton|"
    r"westin|radisson|novotel|ibis|holiday inn|ritz|four seasons|intercontinental|"
    r"best western|premier inn|travelodge|inn|"
    # ... nor a lodge that holds, hosts or has its meetings, nor one by its number ("Lodge No.
    # 42"): "User's Masonic lodge holds its meetings in room 2" waited for a reviewer from
    # stop 65's second review of admission until stop 66's review of it. A lodge that hosts a
    # person or has a room for one is a lodging still: "User's ski lodge has room 12 reserved
    # for them", "The lodge hosted the user in room 12" (stored from that review until its
    # own).
    r"lodge(?!\W+(?:meets|met|meetings?|gathers|hall|no|number|a|an|(?:holds|held|hosts|"
    r"hosted)(?!\W+(?:the\W+)?(?:user|users|them|him|her|me|us|guests?)\b)|(?:has|had)\W+"
    r"(?:its|their)\b)\b))"
)
# A room by its word, not one to meet in ("meeting room 4", "function room 2").
_ROOM = r"(?<!meeting )(?<!conference )(?<!function )\b(?:room|suite|rm)\b"
# A room or a suite a lodging's word names, right before it ("hotel suite"); "suite" or "rm"
# alone after a person's possessive is any room ("User's suite is #4 in the office building")
# unless a lodging is named after it (``_LODGINGS_NAMED_AFTER``).
_LODGING_ROOM = r"(?:(?:hotel|motel|hostel)\W+(?:room|suite|rm)|room)\b"
_ROOM_NUMBER = _ROOM + r"\W{1,3}(?:(?:no|number)\W{1,3})?\d{1,5}[a-z]?\b"
# A room's number given after its room ("... is 1204", ": 818"), not its price, size or
# distance ("was 120 euros a night", "is 12 square metres", "was 3 floors up").
_ROOMS_NUMBER_GIVEN = (
    r"\W{0,3}(?:\b(?:is|was)\b|[:#])\s{0,2}#?\d{1,5}[a-z]?\b(?![.,]?\d)(?!\s*(?:euros?|"
    r"dollars?|pounds?|bucks|a night|per night|nights?|square|sq|m2|ft|feet|metres?|meters?|"
    r"degrees?|floors?|minutes?|mins|blocks?|km|miles?)\b)"
)
# The verbs of a stay, right before a room's number ("is staying in room 412", "checked into
# room 818", "sleeps in room 412", "spent the night in room 9"): where a person sleeps. Not a
# stay of another kind further off ("stays after school in room 12"). The sleeping verbs
# were stored until the audit of stop 65's review of its admission fixes.
_STAY = (
    r"(?:stay(?:s|ed|ing)?|check(?:s|ed|ing)?\W+in(?:to)?|booked into|lodg(?:es|ed|ing)|"
    r"sleep(?:s|ing)?|slept|spen(?:ds?|t|ding)\W+the\W+night)"
)
# Places with rooms no one lodges in: a library's, an office's, a school's.
_OTHER_PLACES = (
    r"(?:library|office|offices|school|classroom|college|university|campus|camp|daycare|"
    r"nursery|kindergarten|preschool|museum|gallery|church|temple|mosque|synagogue|"
    r"community (?:centre|center)|studio|gym|workplace|work|lab|laboratory|factory|"
    r"warehouse|courthouse|town hall|city hall)"
)
# A room that is another place's, said right after its number ("room 3 of the library", "in
# the office building"): no lodging, unless one is named further on in the sentence ("room 3
# in the east wing of the Marriott"). "User stays in room 3 of the library to study" waited
# for a reviewer from stop 65's review of its admission fixes until that review's audit. Only
# a place named so: "... room 412 on the fourth floor", "at the end of the hall", "User's
# hotel room is 412 on the fourth floor" are a lodging's rooms still (stored from that audit
# until stop 66's review of admission). A word before the place is letters alone, a hyphen
# between two: read as "[\w-]+", which a hyphen both ends and continues, "room 12 of the
# a-a-a-..." was split every way (4,000 characters took 0.6 s, stop 66's review of its
# admission fixes).
_NOT_A_LODGINGS_ROOM = (
    r"(?!\W+(?:of|in|at|on)\W+(?:(?:the|a|an|user'?s|my|his|her|their|our)\W+)?"
    r"(?:\w+\W+){0,3}?" + _OTHER_PLACES + r"\b(?!" + W + r"{0,60}?\b" + _LODGING + r"\b))"
)
# A lodging named after a room's number in its sentence: "User's suite is 1204 at the Ritz"
# (stored from stop 65's second review of admission until stop 66's review of it).
_LODGINGS_NAMED_AFTER = r"(?=" + W + r"{0,60}?\b" + _LODGING + r"\b)"
# A coordinate to a few metres, its hemisphere's letter after or before it ("51.5007 N",
# "N51.5007"), or in degrees, minutes and seconds ("51°30'2\"N", seconds optional; "º" reads
# "o", "″" reads "''").
_DECIMAL_DEGREES = r"\d{1,3}\.\d{3,}\s?°?"
_DMS = r"\d{1,3}[°o]\s?\d{1,2}'\s?(?:\d{1,2}(?:\.\d+)?(?:\"|'')\s?)?"
# What follows English "via" (a channel, a vehicle, a determiner, a gerund), where Italian's
# follows with a street's name: "at 7 via Zoom" is a time, "at 7 Via Roma" an address.
_VIA_NOT_A_STREET = (
    r"(?:the|a|an|my|our|your|their|his|her|its|this|that|email|e-mail|mail|post|text|sms|"
    r"phone|call|chat|video|zoom|teams|microsoft|skype|google|meet|slack|whatsapp|signal|"
    r"telegram|facetime|webex|discord|app|link|web|online|train|bus|car|taxi|uber|ferry|"
    r"plane|flight|bike|metro|subway|tube|rail|road|\w+ing)"
)
# A hemisphere by its letter or its name ("51.5007 N", "51.5007 North").
_NORTH_SOUTH = r"(?:north|south|[ns])"
_EAST_WEST = r"(?:east|west|[ew])"
# A blood group's value: its letters and its sign, spelled or not ("O negative", "AB+"), or
# the letters alone at a clause's end.
_BLOOD_GROUP = r"(?:ab|a|b|o|0)(?:\s?[+-]|\s(?:pos|neg)\w*|(?=\s*+(?:$|[.,;!?\n)])))(?![\w+-])"
# A mother by the words for her a security question uses ("mother's", "mom's", "mum's").
_MOTHERS = r"(?:mother|mom|mum)'?s"

# Religions and their followers, folded, in the guards' languages.
RELIGIONS = (
    r"(?:muslim|muslima|musulman|musulmana|musulmane|musulmano|muculmano|muculmana|christian|"
    r"cristiano|cristiana|chretien|chretienne|christ|christin|cristao|crista|jewish|jew|judio|"
    r"judia|juif|juive|jude|judin|judisch|judeu|ebreo|ebrea|hindu|buddhist|budista|"
    r"bouddhiste|buddhistin|buddista|catholic|catolico|catolica|catholique|katholisch|katholik|"
    r"cattolico|cattolica|atheist|atheistin|ateo|atea|athee|ateu|mormon|mormona|sikh|sij|"
    r"protestant|protestante|protestantisch|evangelical|evangelico|evangelica|evangelique|"
    r"evangelisch|jehovah'?s witness|testigo de jehova|temoin de jehovah|zeuge jehovas)"
)

# A password's shape: a word of letters with a digit or a symbol ("Passw0rd!", "S3cret!pass"),
# each within its first 200 characters: looked for to the end of a run of "login,login,..."
# from each word of it a login's word reads on to, 4,000 characters took 0.8 s (stop 66's
# audit of the guards' regular expressions).
_MIXED_WORD = r"(?=[^\s/\d!@#$%^&*]{0,200}+[\d!@#$%^&*])(?=[^\s/a-z]{0,200}+[a-z])[^\s/]{6,}"

# What a person falls behind on: "behind on rent", "late on their car payment".
_MONEY_OWED = (
    r"(?:rent|mortgage|bills?|payments?|loan|car payments?|credit card|child support|taxes|"
    r"utilities)"
)

SENSITIVE_PATTERNS: dict[str, re.Pattern] = {
    "health": rx(
        # As a trie: a flat alternation of 123 names made the health scan three times slower.
        r"\b(?:" + trie_source(set(MEDICINES)) + r")\b|",
        r"\b(?:diagnos(?:is|ed|es)|medications?|",
        _MEDICINE_AS_CARE,
        r"|prescri(?:bed|ption)|insulin|metformin|"
        r"antidepressants?|chemotherapy|chemo|cancer|tumou?r|diabetes|diabetic|hiv|aids|asthma|"
        # ... HIV and AIDS by their names, and the infections named as a group (stored until
        # stop 61's audit of admission)
        r"immunodeficien\w*|immune deficiency|sexually transmitted (?:infections?|diseases?)|"
        # ... and by their names, and the group in the other languages (stored until stop
        # 61's review of its vocabulary fix)
        r"chlamydia|syphilis|gonorrh?o?ea|genital (?:herpes|warts)|trichomoniasis|"
        r"transmision sexual|sexuellement transmissibles?|sexualmente transmissive(?:l|is)|"
        r"sexualmente trasmess[ae]|sexualmente trasmissibil[ei]|sexuell ubertragbar\w*|"
        r"depression(?:en)?|depressed|anxiety disorder|panic attacks?|adhd|autism|autistic|bipolar|"
        r"schizophreni\w*|ptsd|pregnan(?:t|cy)|miscarriage|therap(?:y|ist)|psychiatri\w*|"
        r"surgery|allerg(?:y|ies|ic)|disease|disorder|illness|chronic|epilep\w*|seizures?|"
        r"\d+\s?mg\b|blood pressure|hypertension|dementia|alzheimer'?s|rehab|addiction|"
        r"disabilit(?:y|ies)|wheelchair|hospitali[sz]ed|diagnostico|enfermedad|embarazada|"
        r"medicamento|diagnostic|maladie|enceinte|medicament|diagnose|krankheit|schwanger|"
        r"medikament|doenca|gravida|diagnosi|malattia|incinta|farmaco|terapia|"
        # es, fr, de, pt, it: the conditions and care the English words above name
        r"vih|sida|cancro|tumore|tumeur|tumor|krebs(?!\W+(?:cycle|zyklus))|krebserkrankung|"
        r"diabete|diabetiker|diabetico|diabetica|diabetique|depresion|depressione|depressao|"
        r"depressiv|deprimido|deprimida|angststorung|transtorno|trastorno|"
        r"quimioterapia|chimiotherapie|chemotherapie|chemioterapia|psiquiatr\w*|psichiatr\w*|"
        r"embarazo|grossesse|schwangerschaft|gravidez|gravidanza|enfermedades|krankheiten|"
        r"alzheimer|demencia|demence|demenz|epilessia|epilepsia|epilepsie|"
        r"alcoholism|alcoholics anonymous|aa meetings?|narcotics anonymous|is an alcoholic|"
        r"recovering alcoholic|alcoholismo|alcoolisme|alkoholismus|alkoholiker|alcoolismo|"
        r"alcolismo|adiccion|drogensucht|alkoholsucht|dependencia quimica|"
        # Self-harm, reproductive care and conditions named by their own name.
        r"suicid\w*|self-harm\w*|self harm\w*|overdosed?|abortions?|ivf|in vitro|"
        r"fertility treatments?|infertil\w*|parkinson'?s|multiple sclerosis|"
        r"hepatitis|dialysis|transplant|anorexi\w*|bulimi\w*|eating disorder|"
        r"crohn'?s|ocd|heart attack|cardiac arrest|concussion|aborto|avortement|"
        r"abtreibung|suicidio|selbstmord|suizid\w*|"
        # ... blood cancers, lupus (not the wolf, "canis lupus") and a weakened immune
        # system, and a blood group by its name in the other languages (each stored personal
        # until stop 65's audit of admission)
        r"leuk(?:a?emia|amie)|leucemi[ae]|lymphom(?:as?|e)?|linfoma|(?<!canis )lupus|"
        r"immuno-?compromised|immuno-?suppress\w*|"
        r"grupo sanguineo|tipo (?:de sangre|sanguineo)|groupe sanguin|blutgruppe|"
        r"gruppo sanguigno|"
        # Genetic data (GDPR art. 9), a test's result or a gene's variant, and HIV's
        # prevention by its name, taken (each stored personal until stop 64's audit of
        # admission): "User is reading about genetics for a class" names no one's genes,
        # "User does meal prep on Sundays" no medicine. Nor a subject's genes, studied ("about
        # gene mutations", "a course on genetic variants") or of a species ("genetic markers
        # in wheat", a dog's "genetic test for breed ancestry"), each waiting until stop 64's
        # review of admission.
        r"brca[12]?|apoe\W?e?[234]|(?<!about )(?<!on )(?:gene|genetic)\W+(?:mutations?|"
        r"variants?|markers?|tests?|testing|results?|screening|predispositions?|disorders?|"
        r"conditions?)(?!\W+(?:in|of)\W+(?!(?:the\W+)?(?:user|him|her|them|me)\b)\w|"
        r"\W+for\W+(?:\w+\W+)?breeds?\b)|"
        r"dna test results?|(?:23andme|ancestry ?dna) results?|carrier screening|sickle cell|"
        r"cystic fibrosis)\b|"
        r"\b(?:takes?|taking|took|on|started|starting|stopped|prescribed)\W+prep\b"
        r"(?=\s*+(?:$|[.,;!?\n)]|pills?\b|medication\b|daily\b))|"
        # A diagnosis by its ICD code: {"icd10": "E11.9"} reads "icd10: e11.9".
        r"\bicd\W?(?:9|10|11)?(?:\W?cm)?\b\W{0,3}(?:codes?\W{0,3})?(?:[:=]|is\b|was\b)?\W{0,3}"
        r"[a-z]\d\d(?:\.\w{1,4})?\b|"
        # "had a stroke", not "a stroke of luck" nor "backstroke".
        r"\b(?:had|suffered|survived|recovering from|after|since)\W+(?:a\W+|an\W+|his\W+|"
        r"her\W+|their\W+)?(?:\w+\W+)?stroke\b(?!\W+of\b)|"
        # An STD or an STI had or tested for: the letters alone are C++'s "std::" and a
        # Subaru's "WRX STI".
        r"\b(?:has|had|have|got|caught|contracted|positive for|negative for|treated for|"
        # C++'s "std::string" after "has" too (stop 61's review of its vocabulary fix).
        r"tested for|treatment for|diagnosed with)\W+(?:an?\W+)?st[di]s?\b(?!::)|"
        r"\bst[di]s?\W+(?:tests?|testing|screening|clinic|results?|diagnosis|treatment|status)\b|"
        # A blood type, a person's or given its value ("User's blood type is O negative",
        # {"blood_type": "O-"} read "blood type: O-"); the band "Blood Type" is no one's. Stored
        # personal until stop 65's audit of admission, as were the rules below it.
        r"\b(?:user'?s|my|his|her|their|your)\W+blood (?:type|group)s?\b|"
        # ... its value after "blood is type" or after whose it is ("User's blood is type A
        # positive", "Blood type of the user: B+": stored until stop 65's review of its
        # admission fixes)
        r"\bblood(?:\W+(?:is|was))?\W?(?:type|group)s?\W{0,3}(?:(?:is|was)\W{1,3}|"
        r"of\W+(?:\w+\W+){0,2}?\w+\W{0,3}(?:is|was|[:=])\W{0,3})?",
        _BLOOD_GROUP,
        r"|"
        # A test's reading, a number after it: "User's A1C was 9.1", "cholesterol is 280",
        # "fasting glucose is 130", "LDL was 190" (the last two stored until stop 65's review
        # of its admission fixes); not the words alone ("oats lower cholesterol in 6 weeks" is
        # a cereal box's, "glucose tablets in packs of 10" a shop's).
        r"\b(?:(?:hb)?a1c|cholesterol|blood sugar|glucose|ldl|hdl|triglycerides)\W{1,3}"
        r"(?:(?:levels?|readings?|is|was|were|are|of|at|now|came back|down to|up to)\W{1,3})"
        r"{0,3}?\d|"
        r"\b(?:has|have|had|with)\W+(?:high|elevated|raised)\W+cholesterol\b|"
        # A medical record's number, under its name or its letters before a number.
        r"\bmedical records? (?:number|",
        _NO,
        r"|#)|\bmrn\W{0,3}(?:(?:is|was|[:#=])\W{0,3})?\d",
    ),
    "finance": rx(
        r"\b(?:salary|salaries|income|earns|wage|debts?|loans?|mortgage|credit score|"
        r"bankrupt\w*|net worth|bank account|credit card|debit card|card number|tax return|"
        r"savings|overdraft|payslip|paycheck|investments?|portfolio value|iban|"
        r"take-home pay|net pay|gross pay|monthly pay|annual pay|"
        # ... a bank account's numbers, and payments missed (stored until stop 61's audit of
        # admission: "User's routing and account numbers are ...", "... behind on rent")
        r"routing (?:and account )?(?:numbers?|",
        _NO,
        r")|aba number|sort code|"
        # ... as a form or a bank writes them: "routing #", "Bank routing: ...", Australia's
        # BSB (stored until stop 61's review of its vocabulary fix)
        r"routing(?= ?#)|bank routing(?=\s*[#:=]|\W{1,3}\d)|bsb (?:number|code|",
        _NO,
        r")|"
        r"salario|sueldo|deuda|hipoteca|salaire|dette|hypotheque|gehalt|schulden|hypothek|"
        r"divida|stipendio|debito|mutuo)\b|"
        # ... "overdue", "late" or "in arrears" on them, a bill or a payment alone too, and
        # in Spanish and German (stored until stop 61's review of its vocabulary fix)
        r"\b(?:behind|overdue|in arrears)\W+(?:on|with|in)\W+(?:(?:the|their|his|her|my|"
        r"our)\W+)?(?:\w+\W+)?",
        _MONEY_OWED,
        r"\b|"
        # ... and overdue after them, a person's: "User's rent is two months overdue" (stored
        # until stop 61's audit of admission), not work on them ("The PR for payments is two
        # days overdue", held until its last review)
        r"\b(?:my|our|his|her|their|\w+'s)\W+(?:\w+\W+)?",
        _MONEY_OWED,
        r"\W+(?:is|are|was|were)\W+(?:\w+\W+){0,3}?(?:overdue|past due|in arrears)\b|"
        # ... "late" only paying them or on a named one, and not as work running late on a
        # money word's feature: "worked late on the payments migration" (held until stop 61's
        # audit of admission)
        r"\blate\W+(?:(?:in\W+)?paying|(?:on|with)\W+(?:the|their|his|her|my|our))\W+(?:\w+\W+)?",
        _MONEY_OWED,
        r"\b(?!\W+(?:migration|standup|stand-up|meeting|call|service|feature|page|project|"
        r"team|system|app|integration|api|flow|form|release|review|sync|ticket|report|"
        r"deadline|code|module|pipeline|dashboard|sprint|launch|rollout|deploy\w*))|"
        r"\batraso\W+(?:en|con)\W+(?:\w+\W+)?(?:alquiler|renta|hipoteca|pagos?|facturas?|"
        r"prestamo)\b|"
        r"\bmit\W+(?:der|den|seiner|ihrer)\W+(?:miete|raten?|zahlungen?|rechnungen?)\W+"
        r"(?:\w+\W+){0,3}?im ruckstand\b|\b(?:miet|zahlungs)ruckstand\w*|"
        # A card number: its shape here, its Luhn check in ``_sensitive_match`` (four years
        # in a row, "2019 2020 2021 2022", fail it; 9 in 10 numbers of the shape do).
        r"(?P<card>\b(?:\d[ -]?){13,19}\b)|"
        # An IBAN without the word: its shape here, its mod-97 checksum in ``_sensitive_match``
        # (a product code of the same shape fails it 96 times in 97).
        r"(?P<iban>\b[a-z]{2}\d{2}(?: ?[a-z0-9]{4}){2,7}(?: ?[a-z0-9]{1,4})?\b)",
    ),
    "credentials": rx(
        r"\b(?:password|passcode|passphrase|api key|secret key|access key|"
        r"access token|auth token|bearer token|private key|ssh key|seed phrase|recovery codes?|"
        r"backup codes?|"
        # ... and a licence's key, which unlocks what the user paid for ("User's Windows
        # license key: ...", refused as a business state until stop 64's review of admission)
        r"licen[cs]e keys?|product keys?|"
        r"recovery phrase|2fa code|otp|one-time code|contrasena|mot de passe|passwort|senha|"
        r"kennwort|credentials?)\b(?:",
        NESTED_KEYS,
        r"|\W+",
        CREDENTIAL_OF,
        r"\W+(?:\w+\W+){0,3}?(?=",
        CREDENTIAL_IS,
        r"\b|[:=]))?\W{0,3}(?:",
        CREDENTIAL_IS,
        r"\b|[:=])\W{0,3}\S{4,}|"
        # A PIN is digits: "pin: 3.11.4" is a version pinned, "pin: numpy==1.26" a package.
        # So is the code of a door, a gate or an alarm: "User's gate code is 4921." (stored
        # until stop 61's audit of admission, where "User's PIN is 4921." waited), and a
        # keypad's, a safe's or a lock's, in the guards' languages too (until its review);
        # a locker's code and "the combination to the safe" until its audit of admission.
        r"\b(?:pin(?:[ -]?code| number)?|(?:door|gate|alarm|entry|lockbox|garage|keypad|locker|"
        r"safe|lock|padlock)(?: door)? code|(?:safe|lock|locker|padlock) combination|"
        r"combination (?:to|for|of)\W+",
        # Whole words, one way only: "[\w']+\W+" split a run of apostrophes every way, 8.4 s
        # for a 150-character content (stop 61's last review)
        words(0, 2),
        r"(?:safe|lock|locker|padlock)|"
        r"codigo (?:de|da|do) (?:la )?(?:puerta|porta|alarma|alarme|portao)|"
        r"code (?:de la porte|de l'alarme|du portail)|"
        r"(?:tur|tor|alarm)code|codice (?:della porta|dell'allarme|del cancello))\b"
        r"(?:\W+",
        CREDENTIAL_OF,
        r"\W+(?:\w+\W+){0,3}?(?=",
        CREDENTIAL_IS,
        r"\b|[:=]))?\W{0,3}(?:",
        CREDENTIAL_IS,
        r"\b|[:=])\W{0,3}\d{4,12}(?!\w|[.,]\d)",
        # ... not a count of something: "The lock code is 1200 lines long" (stop 61's last review)
        r"(?!\W{1,3}(?:lines?|loc|ms|seconds?|minutes?|hours?|days?|users?|bytes?|kb|mb|gb|"
        r"characters?|chars|words?|rows?|files?|tests?|times|steps|pages?)\b)|"
        r"\b(?:sk-[a-z0-9_-]{16,}|akia[0-9a-z]{16}|ghp_[a-z0-9]{30,}|xox[abpr]-[a-z0-9-]{10,}|"
        r"mlk_[a-z0-9]+_\S{10,}|glpat-[a-z0-9_-]{16,})|-----begin [a-z ]*private key-----|"
        # A password under the abbreviations every config file and form writes, a Stripe
        # secret key, and backup codes: "User's pwd: Hunter2024!", {"pwd": ...}, the key
        # "email.pw", "sk_live_...", "MFA recovery codes are 1234-5678" were stored personal
        # (stop 60's audit of admission). The abbreviations as a label only, before ":" or
        # "=" ("pwd" is also the shell's command, "pw" a part of words); plural codes before
        # "are" with a digit in what follows ("User's backup codes are in the safe" says
        # where, not what). A path after it is the shell's working directory, not a
        # password: "pwd: /home/jane/projects", "PWD=/home/jane/app" (stop 60's review).
        r"\b(?:pwd|passwd|pw)\W{0,3}[:=](?!\W{0,3}[/~])\W{0,3}\S{4,}|"
        # ... and credentials with no word for a password (stored personal until stop 64's
        # audit of admission): the abbreviation before a password's shape ("jane.doe@gmail.com,
        # pw Hunter2024!"), not a path ("pwd ~/projects"); a login and its secret after a
        # login's word, a "/" between ("Netflix login: jane@x.com / Passw0rd!", "Creds for the
        # AWS console: admin / S3cret!pass"), not after an account's ("routing and account
        # numbers are 021000021 / 12345678" is finance, its leetspeak reading letters); and a
        # login's key beside a secret's in a value ({"login": "jane@x.com", "secret":
        # "Passw0rd!"} reads "login: jane@x.com; secret: Passw0rd!"). Not a login's words
        # alone: "User's login page design uses a blue button", "login: jane / SSO via Okta".
        r"\b(?:pwd|passwd|pw)(?:\s+(?:is|was)\b)?\s+(?!~)",
        _MIXED_WORD,
        r"|\b(?:logins?|log-?ins?|sign-?ins?|creds|credentials)\b",
        W,
        # ... "," or " - " between them, or "pass" (stored until stop 64's review of admission)
        r"{0,60}?(?<![\w.+@-])[\w.+@-]++(?:\s*+(?:[/|,]|-(?=\s))|\s++pass\b)\s*",
        _MIXED_WORD,
        # ... and "pass" after an address: "jane.doe@gmail.com, pass Hunter2024!" (stored
        # until that review), not a pass of a trip ("boarding pass BA2490")
        r"|@[\w.-]++\W{1,3}pass\s+",
        _MIXED_WORD,
        r"|\b(?:login|username|user ?name|user ?id|e-?mail)\W{0,3}[:=][^\n]{0,80}?"
        r"\b(?:pass|secret)\W{0,3}[:=]\W{0,3}\S{4,}|"
        r"\b(?:pass|secret)\W{0,3}[:=][^\n]{0,80}?\b(?:login|username|user ?name|user ?id|"
        r"e-?mail)\W{0,3}[:=]|"
        r"\b[rs]k_(?:live|test)_[a-z0-9]{16,}|"
        r"\b(?:recovery|backup) codes\W+(?:are|were)\W+(?:\w+\W+){0,2}?[\w-]*\d|"
        # The answers that reset an account as a password does, given: a security question's
        # ("User's security question answer is Fluffy") and a mother's maiden name, a
        # person's or under its key (both stored personal until stop 65's audit of admission).
        # Not the questions alone ("User finds security questions annoying", "security
        # questions are pointless") nor anyone's ("a mother's maiden name is a weak check").
        r"\bsecurity (?:question )?answers?\W{0,3}(?:is|was|are|were|[:=])\W{0,3}\w|"
        r"\bsecurity questions?\W{0,3}[:=]\W{0,3}\w|"
        r"\banswers? (?:to|for)\W+(?:\w+\W+){0,2}?security questions?\W{0,3}(?:is|was|are|"
        r"were|[:=])\W{0,3}\w|"
        # A mother's by any of her words ("mom's", "mum's": stored until stop 65's review of
        # its admission fixes).
        r"\b(?:(?:user'?s|my|his|her|their|your)\W+",
        _MOTHERS,
        r" maiden name\W{0,3}(?:is|was)\b|",
        _MOTHERS,
        r" maiden name\W{0,3}[:=])\W{0,3}\w",
    ),
    "government_id": rx(
        r"\b(?:ssn|social security(?: number)?|passport(?: number| no)?|driver'?s licen[cs]e|"
        r"national id|national insurance number|tax id|taxpayer id|id card number|"
        # ... the numbers of the US public health insurance (stored until stop 65's audit of
        # admission)
        r"medica(?:re|id) (?:number|card|id|",
        _NO,
        r")|medicare beneficiary (?:identifier|id|number)|"
        # ... the UK's health service number and India's national id (stored until stop 61's
        # audit of admission)
        r"nhs (?:number|",
        _NO,
        r")|aadhaa?r(?: number| card| ",
        _NO,
        r")?|"
        # ... Canada's social insurance number, Australia's tax file number and the
        # Netherlands' BSN (stored until stop 61's review of its vocabulary fix; "social
        # insurance no." until its audit of admission)
        r"social insurance (?:number|",
        _NO,
        r")|tax file number|burgerservicenummer|bsn(?: number| ",
        _NO,
        r")?|"
        r"numero de securite sociale|personalausweis|steuer-?id|"
        r"steuernummer|codice fiscale|tessera sanitaria)\b|\b\d{3}-\d{2}-\d{4}\b|"
        # Short names of ids are also words ("nie" is German for never, RFC 3339 a standard,
        # "rg" rot13 for "et"): they count with an id beside them, six digits or more with
        # at most a few letters ("12345678Z", "123.456.789-09", "GODE561231GR8").
        r"\b(?:dni|nie|nif|curp|rfc|cpf|rg)\b\W{1,3}(?:[a-z]{1,10}\W{1,3}){0,3}?"
        r"[a-z]{0,4}[.-]?\d(?:[ .-]?\d){5,}(?:[.-]?[a-z0-9]{1,8})?\b|"
        # Medicare's identifier by its short name, only before one ("MBI: 1EG4-TE5-MK73",
        # stored until stop 65's review of its admission fixes): "an MBI course" is none.
        r"\bmbi\W{0,3}(?:(?:is|was|number|no|[:#=])\W{0,3})?"
        r"\d[a-z][a-z\d]\d[\s-]?[a-z][a-z\d]\d[\s-]?[a-z]{2}\d{2}\b",
    ),
    "precise_location": rx(
        # A house number and its street read across any mark, a clause's end too: held apart
        # under their keys or in a list ("street number: 12; street name: abbey road", "addr:
        # 221; addr: baker street") they are an address. Stopped at "; ", they were stored
        # (stop 58's review of its admission fixes); two lane numbers under their key ("swim
        # lane: 3; swim lane: 4") wait for a reviewer, the lesser harm.
        r"\b\d{1,5}\W+(?:\w+\W+){1,3}?(?:street|st|avenue|ave|road|rd|lane|ln|boulevard|blvd|"
        r"drive|dr|court|ct|way|place|pl|terrace|calle|rue|strasse|str|rua|via|viale)\b|"
        r"\b(?:calle|rue|rua|via|avenida)\W+\w+(?:\W+\w+)?\W+\d{1,5}\b|"
        r"\b\w+(?:strasse|str\.)\W+\d{1,4}\b|"
        # A street held under its own key, its number elsewhere or none: {"home": {"street":
        # "Baker Street"}} reads "home: street: baker street". The marks around the colon are
        # read once, up to its first colon (``\W*:\W*`` split "Street " and a run of 3,880
        # ":" every way, 1.7 s; stop 62's sweep of admission).
        r"\b(?:street|address)[^\w:]*+:\W*+(?:\w+\W+){1,3}?(?:street|st|avenue|ave|road|rd|lane|"
        r"boulevard|blvd|drive|terrace|calle|rue|strasse|rua|via|viale)\b|"
        r"\b(?:home address|lives at|resides at|apartment \d|apt\.? \d|flat \d|gps|"
        r"coordinates|geolocation|current location)\b|"
        r"-?\d{1,2}\.\d{3,},\s*-?\d{1,3}\.\d{3,}|"
        # The same point under its keys, as a value's lines read {"lat": .., "lon": ..}
        # ("lat: 52.520008; lon: 13.404954"), either order, on one line: stored personal, where
        # the pair side by side in the content waits (stop 56's audit of admission). Both, each
        # to the content's precision: a tolerance or a rounded latitude alone is no address.
        r"\b(?:lat|latitude)\W{1,3}-?\d{1,2}\.\d{3,}[^\n]{0,80}?"
        r"\b(?:lon|long|lng|longitude)\W{1,3}-?\d{1,3}\.\d{3,}|"
        r"\b(?:lon|long|lng|longitude)\W{1,3}-?\d{1,3}\.\d{3,}[^\n]{0,80}?"
        r"\b(?:lat|latitude)\W{1,3}-?\d{1,2}\.\d{3,}|"
        # A point by its hemispheres' letters, decimal or in degrees, minutes and seconds
        # ("51.5007 N, 0.1246 W", "51°30'2\"N 0°7'28\"W"): stored personal until stop 65's
        # audit of admission, as were the rules below it; by their names ("51.5007 North")
        # until its review. A version ("v51.5007") or a score ("won 51-30") has no hemisphere.
        r"\b",
        _DECIMAL_DEGREES,
        r"\s?",
        _NORTH_SOUTH,
        r"\W{1,3}",
        _DECIMAL_DEGREES,
        r"\s?",
        _EAST_WEST,
        r"\b|\b",
        _NORTH_SOUTH,
        r"\s?",
        _DECIMAL_DEGREES,
        r"\W{1,3}",
        _EAST_WEST,
        r"\s?",
        _DECIMAL_DEGREES,
        r"|\b",
        _DMS,
        _NORTH_SOUTH,
        r"\W{0,3}",
        _DMS,
        _EAST_WEST,
        r"\b|"
        # A room's number where a person stays: after a hotel or a chain's name, in its
        # sentence or the next ("the Marriott downtown, room 818", "the Hilton on 5th Ave.
        # Room 1204"), right after a verb of a stay ("is staying in room 412"), a person in
        # or a booking of a room at a hotel ("User is in room 1204 at the Hilton", "booked
        # room 1204 at the Hyatt"), or after the room at a hotel or a person's room ("User's
        # room at the Hilton is 1204", "User's hotel room number is 818"). Not a room wished
        # for ("a quiet room away from the lift") nor one a hotel's name follows alone
        # ("teaches in room 204 at the Hilton School", "the film Room 237, about the
        # Overlook Hotel"), which waited from stop 65's audit of admission until its review.
        # A room before its hotel counts too with a stay's verb in the sentence ("Room 1204
        # at the Hilton is where the user is staying"), and the sentence after a hotel's only
        # as "Room N" alone or with a stay's verb ("The hotel was nice. Room 237 in The
        # Shining is the scariest" is stored): both since the audit of that review.
        r"\b",
        _LODGING,
        r"\b",
        W,
        r"{0,60}?(?:",
        _ROOM_NUMBER,
        r"|[.!?;]\s+(?:",
        _ROOM_NUMBER,
        r"\s*(?:[.!?;\n]|$)|",
        W,
        r"{0,60}?\b",
        _STAY,
        r"\b",
        W,
        r"{0,60}?",
        _ROOM_NUMBER,
        r"|",
        _ROOM_NUMBER,
        W,
        r"{0,60}?\b",
        _STAY,
        r"\b))|\b",
        _STAY,
        r"\W+(?:(?:in|into|at)\W+)?(?:the\W+)?",
        _ROOM_NUMBER,
        _NOT_A_LODGINGS_ROOM,
        r"|",
        _ROOM_NUMBER,
        W,
        r"{0,60}?\b",
        _LODGING,
        r"\b",
        W,
        r"{0,60}?\b",
        _STAY,
        r"\b|(?:\b",
        _PERSON,
        r"\W+(?:is|am|are|was|were)\W+(?:(?:now|currently|still)\W+)?in|\bbooked)\W+",
        _ROOM_NUMBER,
        W,
        r"{0,60}?\b",
        _LODGING,
        r"\b|",
        _ROOM,
        r"\W+(?:at|in)\W+",
        W,
        r"{0,40}?\b",
        _LODGING,
        r"\b",
        W,
        r"{0,30}?",
        _ROOMS_NUMBER_GIVEN,
        r"|\b(?:user'?s|my|his|her|their|your)\W+",
        _LODGING_ROOM,
        r"(?:\W+(?:number|no))?",
        _ROOMS_NUMBER_GIVEN,
        _NOT_A_LODGINGS_ROOM,
        r"|\b(?:user'?s|my|his|her|their|your)\W+(?:suite|rm)(?:\W+(?:number|no))?",
        _ROOMS_NUMBER_GIVEN,
        _LODGINGS_NAMED_AFTER,
        r"|"
        # A number before a Romance street's word, with no word between ("14 Rue Cler", "22
        # Calle Mayor"); "via" only where an address stands ("at", "is", "in", "address",
        # ":" or "," before, or "to" after a move or a delivery: "User moved to 7 Via Roma" was
        # stored until stop 65's review of its admission fixes, "counts to 7 via flashcards"
        # is no address), and not before what English sends via.
        r"\b\d{1,5}\W{1,3}(?:rue|calle|rua|viale|avenida|avinguda|carrer|piazza|praca|corso|"
        r"paseo|travessa)\W+[a-z]|(?:\b(?:at|is|in|address|(?:mov(?:e|es|ed|ing)|relocat\w+|"
        r"deliver\w*|sen[dt]|ship\w*) to)|[:,])\s+\d{1,5}\s+via\W+(?!",
        _VIA_NOT_A_STREET,
        r"\b)[a-z]",
    ),
    "religion": rx(
        r"\b(?:is|am|are|es|soy|est|suis|ist|bin|e|sou|sono)\W+(?:a\W+|an\W+|ein\W+|eine\W+)?"
        r"(?:devout\W+|practicing\W+|practicante\W+|pratiquant\W+|praticante\W+|glaubige\W+)?",
        RELIGIONS,
        r"\b|"
        r"\b(?:religion|religious beliefs?|"
        r"religioso|religiosa|religieux|religieuse|religios|religiose|religiao|"
        r"(?:va|vai|geht|goes|go|frequenta|frequente|attends?)\W+"
        r"(?:\w+\W+){0,2}?(?:mezquita|sinagoga|mosquee|synagogue|moschee|synagoge|mesquita|"
        r"moschea|mosque|church|iglesia|eglise|kirche|igreja|chiesa|temple|gurdwara|mass|"
        r"misa|messe)(?!\W+(?:of|street|st|road|rd|avenue|run|university|college)\b))\b",
    ),
    "sexual_orientation": rx(
        r"\b(?:is|am|are|identifies as|came out as)\W+(?:\w+\W+)?(?:gay|lesbian|bisexual|"
        r"transgender|trans|queer|asexual|pansexual|non-binary|nonbinary|homosexual|"
        r"heterosexual)\b|"
        # The other languages' "is", right before the word: their "e" is also "and", and
        # "grassi trans", "Queer Eye" say nothing of anyone (stop 48's review).
        r"\b(?:es|soy|est|suis|ist|bin|e|sou|sono)\W+(?:gay|lesbiana|lesbienne|lesbisch|"
        r"lesbica|bisexual|bisexuel|bisexuelle|bisexuell|bissexual|bisessuale|homosexual|"
        r"homosexuel|homosexuelle|homosexuell|omosessuale|transgenero|transgenre|"
        r"transgender)\b|"
        r"\bsexual orientation\b"
    ),
    "political_opinion": rx(
        r"\b(?:votes? for|voted for|member of the \w+ party|political (?:views|affiliation|"
        r"opinions?)|supports the \w+ party|party membership)\b|"
        # The plainest statements, stored personal until stop 60's audit of admission:
        # "Political party: Labour", "Party affiliation: Republican", "User is a registered
        # Democrat", "User is a Republican". A party is political here only by those words
        # ("party: Saturday at 8" is a celebration), a name alone only after "is a" or
        # "registered", and only the names no other sense shares ("a conservative eater").
        r"\b(?:party affiliation|political party\W{0,3}(?:is\b|was\b|:))|"
        r"\b(?:(?:is|am|was|are|were)\W+(?:a\W+|an\W+)?(?:(?:lifelong|registered|staunch|"
        r"committed|proud|card-carrying)\W+)?|registered\W+)(?:(?:democrat|republican|"
        # ... "tory" not as the first of a name's words: "a Tory Burch tote" is a bag (stop
        # 60's review); "a Tory voter" is read below, "a Tory, like his father" here.
        r"labourite)s?\b|tor(?:y|ies)\b(?![ \t]+(?!(?:and|but|or|who|since|now|too|all|"
        r"again|at|in|on|for|from|by)\b)[a-z]))|"
        # A vote or a membership named by its party, in the guards' languages.
        r"\b(?:votes|voted|vote|voting|votara|voto|voto por|voto a|vota|vote pour|a vote pour|"
        r"votait|wahlt|wahlte|gewahlt|votou|votou em|vota per|ha votato|ha votato per|"
        r"supports|backs|member of|miembro de|membre du|mitglied der|mitglied bei|membro do|"
        r"membro del|iscritto al|afiliado al|filiado ao)\W+(?:the\W+|el\W+|al\W+|le\W+|la\W+|"
        r"die\W+|den\W+|o\W+|il\W+|partido\W+|parti\W+|partei\W+|partito\W+)?(?:labour|labor|"
        r"tory|tories|conservatives?|democrats?|republicans?|lib dems?|liberal democrats|"
        r"greens?|green party|snp|ukip|reform uk|gop|psoe|podemos|vox|sumar|partido popular|"
        r"rassemblement national|front national|france insoumise|les republicains|cdu|csu|spd|"
        r"afd|fdp|grunen|die linke|fratelli d'italia|lega|partito democratico|"
        r"movimento 5 stelle|forza italia|bolsonaro|lula|trump|biden|harris)\b|"
        r"\b(?:labour|tory|conservative|democrat|republican|green|lib dem|snp|ukip|trump|"
        r"biden|harris|obama|maga|sanders|bolsonaro|lula|le pen|macron|farage|corbyn|starmer|"
        r"meloni|afd|vox|podemos)\W+(?:voter|supporter|party member|activist)s?\b|"
        r"\b(?:afiliado|afiliada|militante|militant|parteimitglied|filiado|filiada|iscritto|"
        r"iscritta)\W+(?:\w+\W+){0,2}?(?:partido|parti|partei|partito)\b"
    ),
    "criminal_record": rx(
        r"\b(?:criminal record|convicted|conviction|arrested|felony|parole|probation|"
        r"served time|in prison|jail time|jailed|imprisoned|incarcerated|indicted|"
        r"pleaded guilty|pled guilty|behind bars|in jail|went to (?:jail|prison)|"
        r"sentenced to|prison sentence|"
        # ... and in the guards' other languages, as health, religion and politics are read
        # ("L'utilisateur a un casier judiciaire", "Der Nutzer ist vorbestraft" were stored
        # personal until stop 63's audit of admission). Not "na cadeia": Portuguese's
        # "cadeia" is a chain too ("na cadeia de suprimentos").
        r"antecedentes (?:penales|criminales|criminais)|casier judiciaire|vorbestraft|"
        r"vorstrafen?|strafregister|ficha criminal|precedenti penali|fedina penale|"
        r"casellario giudiziale|delito grave|arrestad[oa]|festgenommen|verhaftet|"
        r"arrestat[oa]|encarcelad[oa]|incarceree?|emprisonnee?|inhaftiert|encarcerad[oa]|"
        r"incarcerat[oa]|(?:en|a) (?:la )?(?:prision|carcel)|en prison|de la prison|"
        r"im gefangnis|in haft|haftstrafe|na prisao|in (?:carcere|prigione)|"
        r"libertad condicional|liberte conditionnelle|liberation conditionnelle|"
        r"auf bewahrung|liberdade condicional|liberta (?:vigilata|condizionale)|"
        r"cumplio (?:una )?condena|cumpriu pena|scontato una pena)\b|"
        # Convicted or sentenced, by a verb that also condemns or dooms ("condamné à
        # l'échec", "Er verurteilt Gewalt"): only for an offence or to a sentence.
        r"\b(?:condenad[oa]|condamnee?|verurteilt|condannat[oa]|sentenciad[oa])\W+(?:por|pour|"
        r"wegen|per)\b|"
        r"\b(?:condenad[oa]|condamnee?|verurteilt|condannat[oa]|sentenciad[oa])\W+(?:a|zu)\W+"
        r"(?:\w+\W+){0,3}?(?:anos|ans|jahren?|anni|meses|mois|monaten?|mesi|prision|carcel|"
        r"prison|haft|gefangnis|freiheitsstrafe|bewahrung|prisao|carcere|reclusione)\b"
    ),
    "biometric": rx(
        r"\b(?:fingerprints?|face ?id data|facial (?:scan|geometry)|retina scan|iris scan|"
        r"voiceprint|biometric|"
        # ... and in the guards' other languages (stored personal until stop 63's audit of
        # admission, as criminal records were). Spanish's "huella digital" is also the
        # digital footprint ("reducir su huella digital en redes sociales", pending until stop
        # 63's review of admission): a fingerprint there is "huella dactilar" alone.
        r"huellas? dactilar(?:es)?|empreintes? digitales?|"
        r"fingerabdruck\w*|impress(?:ao|oes) digita(?:l|is)|impront[ae] digital[ei]|"
        r"escaneo (?:facial|de (?:la )?retina|del iris)|scan (?:facial|de la retine|de l'iris)|"
        r"gesichtsscan|netzhautscan|irisscan|escaneamento (?:facial|da retina|da iris)|"
        r"scansione (?:facciale|della retina|dell'iride)|biometri(?:a|e|c[oa]s?|ques?|sch\w*|"
        r"ci|che))\b"
    ),
    # The special categories the policy lacked until stop 64's audit of admission, where
    # each was stored personal: racial or ethnic origin and trade-union membership (GDPR art.
    # 9) and immigration status (the CPRA's). A people's name only with its word: "User's
    # favourite ethnic food is Ethiopian", "User loves Black Sabbath" name no one's origin;
    # a race's name only as a field's value, ending it ("race: Black", not "race: Berlin
    # Marathon").
    "ethnic_origin": rx(
        r"\b(?:ethnicity|ethnic (?:origin|background|identity|heritage|minority)|racial "
        r"(?:identity|background|origin)|etnia|origen etnico|origine ethnique|ethnie|"
        r"ethnische herkunft|ethnizitat|origem etnica|origine etnica)\b|"
        # ... a person's, as the subject (a dog's or a hero's descent waited until stop 64's
        # review of admission), and a race under a person's key or a value's own
        r"\b",
        _PERSON,
        r"\W+(?:who\W+)?(?:is|am|are|was|were)\W+(?:\w+\W+)?of\W+(?:\w+\W+){1,2}?(?:descent|"
        r"ancestry|extraction)\b|"
        r"(?:^|[\n;]\s*|\b(?:user'?s|my|his|her|their)\W+)race\W{0,3}(?:[:=]|is\b|was\b)\W{0,3}"
        r"(?:asian|black|white|caucasian|hispanic|"
        r"latin[oax]|african american|native american|pacific islander|arab|indigenous|mixed|"
        r"biracial|multiracial|middle eastern)(?=\s*+(?:$|[.,;!?\n)]|and\b|or\b))",
    ),
    # A union by its name or a trade union's words, not any union: "User joined the chess
    # union at their university", a credit union's, a student union's or the European Union's
    # members, nor a club's ("a union member of the local chess club": docs/api.md, rule 8;
    # both waited until stop 64's review of admission). A trade's union by its name, joined
    # ("a member of the teachers' union", stored personal until that review), not in the news:
    # "The teachers' union strike closed the user's school".
    "union_membership": rx(
        r"\b(?:member of|members of|belongs? to|belonged to|joined|joins)\W+(?:(?:the|a|their|"
        r"his|her|my|local)\W+){0,2}",
        _TRADES,
        r"'?\W+unions?\b|"
        r"\b(?:trade union|labou?r union|(?<!credit )(?<!european )(?<!student )union member"
        r"(?:ship)?(?!\W+(?:states?|countr(?:y|ies)|of\W+(?:the|a|an|their|his|her)\b))|"
        r"union dues|union rep(?:resentative)?|"
        r"unioni[sz]ed|shop steward|teamsters|seiu|uaw|afscme|ibew|afl-cio|ig metall|ccoo|"
        r"cgil|sindicato|sindicalizad[oa]|sindacato|sindacalizzat[oa]|gewerkschaft\w*|"
        r"syndiquee?|membre d'un syndicat|membre du syndicat)\b",
    ),
    # Not a visa for a trip ("User's visa for the conference trip to Canada was approved")
    # nor a forebear's move ("User's grandfather immigrated from Italy"); nor a novel's or a
    # reporter's subject ("a novel about an asylum seeker", "writes about immigration status
    # law"), nor a refugee's lawyer ("is a refugee lawyer"), each waiting until stop 64's
    # review of admission, where "User is undocumented" and "overstayed her tourist visa"
    # were stored personal.
    "immigration_status": rx(
        r"(?<!about )(?<!about an )(?<!about a )"
        r"\b(?:immigration status|migration status|residency status|residence status|"
        r"citizenship status|undocumented (?:immigrants?|migrants?|workers?|status|residents?|"
        r"aliens?)|illegal (?:immigrants?|migrants?|aliens?)|asylum (?:seekers?|applications?|"
        r"claims?|status|cases?|hearings?)|"
        # ... asylum sought in any tense ("applying for asylum" was stored personal until stop
        # 65's audit of admission)
        r"(?:sought|seek(?:s|ing)?|appl(?:y|ies|ied|ying) for|"
        r"granted|claim(?:s|ed|ing)?|request(?:s|ed|ing)?|fil(?:e|es|ed|ing) for) "
        r"(?:political )?asylum|refugee status|overstay(?:ed|ing|s)? (?:(?:a|an|the|"
        r"their|his|her|my) )?(?:\w+ )?visas?|visa overstay|deportation (?:order|hearing|"
        r"proceedings|case)|facing deportation|(?:was|were|been|got|be) deported|daca recipient|"
        r"temporary protected status|residence permit|green card (?:holder|application|status)|"
        r"inmigrante (?:indocumentad[oa]|ilegal|irregular)|indocumentad[oa]|"
        r"solicitante de asilo|situacion migratoria|estatus migratorio|permiso de residencia|"
        r"sans-papiers|sans papiers|demandeu(?:r|se) d'asile|statut migratoire|titre de sejour|"
        r"aufenthaltstitel|aufenthaltsstatus|aufenthaltserlaubnis|asylbewerber\w*|"
        r"asylsuchend\w*|imigrante (?:indocumentad[oa]|ilegal|irregular)|requerente de asilo|"
        r"situacao migratoria|status migratorio|autorizacao de residencia|"
        r"immigrat[oa] (?:irregolare|clandestin[oa])|richiedente asilo|permesso di soggiorno)\b|"
        r"\b(?:is|am|are|was|were|es|est|ist|e)\W+(?:an?\W+|un\W+|une\W+|ein\W+|eine\W+)?"
        r"(?:refugee|refugiad[oa]|refugiee?|fluchtling|rifugiat[oa])\b(?=\s*+(?:$|[.,;!?\n)]|"
        r"(?:from|in|since|who|and|living|now|with)\b))|\b",
        _PERSON,
        r"\W+(?:is|am|are|was|were)\W+undocumented\b|"
        # A green card had or got, not the film ("User likes the film Green Card"): "User has
        # a green card" was stored personal until stop 65's audit of admission.
        r"\b(?:has|have|had|got|gets|received|receives|holds?|held|obtained|was granted)\W+"
        r"(?:(?:a|an|the|their|his|her|my|its|us)\W+)?green cards?\b|"
        # ... or what a green card does ("User's green card expires in 2027": stored until stop
        # 65's review of its admission fixes); the film "came out in 1990".
        r"\bgreen cards?\W+(?:(?:is|was|got)\W+)?(?:expir\w*|renew\w*|approv\w*|arriv\w*|"
        r"interview\w*|number|denied|revoked|valid)\b",
    ),
}
