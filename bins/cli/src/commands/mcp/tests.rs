use super::*;

#[test]
fn removing_a_server_takes_all_its_tables_and_leaves_the_rest() {
    let text = "[core]\nmode = \"editor\"\n\n[mcp_servers.a]\ncommand = \"x\"\n\n\
                # the b server\n[mcp_servers.b]\ncommand = \"y\"\n\n[mcp_servers.a.env]\nK = \"v\"\n";
    assert_eq!(
        without_server(text, "a").unwrap(),
        "[core]\nmode = \"editor\"\n\n# the b server\n[mcp_servers.b]\ncommand = \"y\"\n"
    );
    assert_eq!(without_server(text, "c"), None);
    let crlf = "[mcp_servers.a]\r\ncommand = \"x\"\r\n[tui]\r\n";
    assert_eq!(without_server(crlf, "a").unwrap(), "[tui]\r\n");
    assert!(toml_defines(text, "b") && !toml_defines(text, "ab"));
    assert!(toml_defines("mcp_servers.z = { command = \"x\" }\n", "z"));
}
