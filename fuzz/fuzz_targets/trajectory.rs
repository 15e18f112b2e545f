//! The trajectory parser and validator on arbitrary bytes: a report or an error, never a panic;
//! what parses as a typed trajectory serialises and parses again.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let options = atif_schema::ValidateOptions::default();
    let _report = atif_schema::validate_bytes(data, &options);
    let Ok(value) = atif_schema::parse_json(data) else { return };
    let _report = atif_schema::validate(&value, &options);
    if let Ok(trajectory) = atif_schema::Trajectory::from_value(&value) {
        let again = serde_json::to_value(&trajectory).expect("a typed trajectory serialises");
        atif_schema::Trajectory::from_value(&again).expect("what was written reads back");
    }
});
